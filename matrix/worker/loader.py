"""``export-matrix load ARTIFACT_DIR... --out DIR``: programs saved on any release, loaded and run on this one.

``run --artifacts`` keeps each passing cell's program with its inputs and eager outputs (:mod:`.artifacts`). This
command loads every artifact under the folders given, whichever release saved it (this one included), with
``torch.export.load``, runs it on the saved inputs and compares the results with the saved outputs, with the cell
check's tolerance, each in a process of its own: a load that crashes or hangs is recorded as such.

Loading runs code from the artifact's folder (``torch.export.load`` unpickles on some releases; the case module is
imported), so an artifact whose ``meta.json`` is not signed with this machine's key (:mod:`.signing`) is recorded as
``untrusted`` by the parent and never reaches a loading process, unless ``--trust`` is given for the folders of this
command. An untrusted record does not count as done: a later ``load --trust`` tries it.

An artifact whose cell ran the aoti stage holds its AOTInductor package too (``aoti.pt2``, or ``aoti.so`` from 2.3 and
2.4), loaded as well under the same rules (:meth:`LoadBatch.items`): refused by the parent when its folder is untrusted,
never read before every file meta.json lists is whole, a crash or hang of its process that load's alone, and
``not-applicable`` with no process where the release has no loader for its file. With ``--aoti``, each program saved
on an older release is also compiled here with AOTInductor within ``--aoti-timeout``, and its package loaded in a
fresh process (:mod:`.aoti_compiles`), refused like a load where the folder is untrusted.

A program is loaded on the device it was saved on: ``--device`` (the CPU by default) picks the programs saved there
(:func:`on_device`), and the others are left out and counted. With ``--device cuda`` each load initialises CUDA in its
own process, and its record and result-cache key name the GPU.

The batch engine (:mod:`.batch`) runs the loads as it runs ``run``'s cells (why a load failed: :mod:`.forensics`).
One record per program, package and compile (their kinds, keys and outcomes: :mod:`matrix.contract.products`) goes
to ``DIR/load_torch-<version>_<variant>_py<X.Y>.jsonl``. Those already recorded there (same saving release, case,
mode and set of packages beside torch) are skipped unless ``--force``; the run journal locks the file and records an
artifact that killed the command as a crash rather than loading it again. Results are kept in the result cache
(:mod:`.reuse`): a program's load by its artifact's content and the loading build; a package's load by those, the
package's sha256 and the C++ compiler (loaders compile, or check the device, with it); a compile by the program's
content, this build and the C++ compiler.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ..contract import dependencies, layout, products, records
from ..contract.errors import UserError
from ..contract.layout import Artifact
from ..contract.products import BY_KIND, PRODUCTS, TALLIES, Product, option_values
from ..contract.requests import LoadRequest
from ..contract.schema import LoadStatus
from . import artifacts, batch, first_use, gpu, reuse, signing, uses
from .environment import installed_torch_version, variant_of
from .journal import Key as JournalKey
from .load_cache import KnownLoads
from .progress import say
from .signing import untrusted
from .use import Use

configure = LoadRequest.add_arguments  # one definition, shared with the host's requests (matrix.contract.requests)


@dataclasses.dataclass(frozen=True)
class LoadOptions(batch.Options, LoadRequest):
    """The options of ``export-matrix load``: a load request, validated before torch is imported."""

    def settings(self, path: str) -> batch.Settings:
        """How the engine runs the loads that go to the record file ``path``."""
        return batch.Settings(
            out=path, timeout=self.timeout, max_memory=self.max_memory, isolation=self.isolation, jobs=self.jobs,
            force=self.force, progress=self.progress, device=self.device, cache=reuse.root(self.cache, self.no_cache),
        )  # fmt: skip


OPTIONS = LoadOptions


def file_name(torch_version: str, variant: str, python: str) -> str:
    """The load record file of one loading environment: ``load_torch-2.9.1_pypi_py3.11.jsonl``."""
    return "load_" + records.env_file_name(torch_version, variant, python)


journal_key = uses.journal_key  # read by the tests and the engine's resuming from here too


# --- in the parent ---------------------------------------------------------------------------


class LoadBatch(KnownLoads, batch.Batch):
    """The artifacts of one load: every saved program selected, and every package kept with one, loaded in the
    installed torch."""

    noun, verb, doing = uses.NOUN, "load", "loading"
    # Each product's outcomes: a load's statuses, and a compile's (--aoti).
    statuses = tuple(dict.fromkeys(status for product in PRODUCTS for status in product.statuses))
    # A program's load, a package's, a program's compile: each record keeps its own kind's keys (see finished).
    record_keys = tuple(dict.fromkeys(key for product in PRODUCTS for key in product.keys))
    # What the parent knows better than the child: the identity of the load.
    parent_keys = uses.PARENT_KEYS

    def __init__(
        self, found: List[Artifact], version: str, variant: str, python: str, signing_key: Optional[bytes] = None,
        trust: bool = False, given: Optional[Mapping[str, Any]] = None, device: str = "cpu",
    ) -> None:  # fmt: skip
        """``signing_key`` verifies each artifact's signature, unless ``trust``; None: there is no key.
        ``given``: each product's options of ``load`` (``products.option_values``), their defaults where it says
        nothing: a product with options of its own is used only where they ask (``Use.planned``). ``device``: where the
        programs were saved and are used (``found`` holds that device's alone)."""
        self.device = device
        self.given: Mapping[str, Any] = {o.field: o.default for o in products.OPTIONS}
        self.given = dict(self.given, **(given or {}))
        self.gpu: Dict[str, Any] = {}  # off the CPU: the GPU the uses run on (gpu.checked)
        # Each use, in order: each artifact's uses of the products found with it (its program's load, then what
        # its cell kept beside it), then those its options ask for (each takes seconds to minutes).
        self.uses: Dict[JournalKey, Tuple[Product, Artifact]] = {}
        for artifact in found:
            for product in PRODUCTS:
                if not product.options and uses.of(product).present(artifact):
                    self.plan(product, artifact)
        for product in PRODUCTS:
            for artifact in uses.of(product).planned(found, version, self.given) if product.options else ():
                self.plan(product, artifact)
        self.follow_ups = any(uses.of(product).follows for product, _ in self.uses.values())
        # What the uses' set-ups find (``Use.set_up``): per file of a product, the loader this release has for it
        # (or None and what it lacks); the API that compiles here (or None and why); the C++ compiler a loader or
        # a compile runs, part of their keys.
        self.loaders: Dict[str, Tuple[Optional[str], Optional[str]]] = {}
        self.compile_api: Tuple[Any, Optional[str]] = (None, "no API was looked for")
        self.compiler = ""
        self.env: Dict[str, Any] = {"torch_version": version, "variant": variant, "python": python}
        self.can_load = False
        self.signing_key = signing_key
        self.trust = trust

    def plan(self, product: Product, artifact: Artifact) -> JournalKey:
        """Plan a use of ``product`` made from ``artifact``; returns its key."""
        key = journal_key(artifact.key, artifact.dependency_set, product, artifact.device)
        self.uses[key] = (product, artifact)
        return key

    def wanted(self) -> List[JournalKey]:
        return list(self.uses)

    def done(self, path: str) -> Tuple[Set[JournalKey], List[str]]:
        """The uses already recorded in a load record file, for resuming."""
        if not os.path.exists(path):
            return set(), []
        found, warnings = records.read(path)
        keys: Set[JournalKey] = set()
        for record in found:
            kind = record.get("kind")
            # An untrusted one was never tried: a later `load --trust` (or with the right key) tries it.
            if kind not in BY_KIND or record.get("status") == LoadStatus.UNTRUSTED.value:
                continue
            key = tuple(record.get(k) for k in ("saved_torch_version", "saved_variant", "saved_python", "case", "mode"))
            saved_set, device = record.get("dependency_set") or "", record.get("device") or "cpu"
            if all(isinstance(part, str) for part in (*key, saved_set, device)):
                keys.add(journal_key(key, saved_set, BY_KIND[str(kind)], device))  # type: ignore[arg-type]
            else:
                warnings.append("%s: skipped a %s record without a usable saving release, case and mode" % (path, kind))
        return keys, warnings

    def set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        import torch

        self.gpu = gpu.checked(torch, self.device)  # bad input where --device cuda cannot run here
        try:
            import torch.export

            self.can_load = hasattr(torch.export, "load")
        except Exception:
            self.can_load = False
        self.env.update(run_id=run_id, serializer_version=artifacts.serializer_version())
        for use in dict.fromkeys(uses.of(product) for product, _ in self.uses.values()):
            use.set_up(self)  # once, here: what it imports before forking, each use's process need not import
        if self.can_load:
            self.preimport(settings)
        self.keep_environment(settings)  # for a later load whose every result stands: answered without torch
        return None

    def libraries(self) -> List[str]:
        # The packages the programs were saved with: each load imports its case module, and with it them.
        sets = {saved_with(artifact) for _, artifact in self.uses.values()}
        return sorted({r for key in sets for r in dependencies.key_requirements(key)})

    def record(self, product: Product, artifact: Artifact) -> Dict[str, Any]:
        """The record of a use of ``product`` made from ``artifact``, as far as the parent knows it before the use."""
        return uses.record(product, artifact, self.env, self.gpu)

    def items(self, keys: Sequence[JournalKey]) -> List[batch.Item]:
        return [self._item(key) for key in keys]

    def _item(self, key: JournalKey) -> batch.Item:
        """A use as the parent plans it: complete without a process where the folder is damaged or untrusted, or
        where this release (or machine) lacks what the use needs; else with its job."""
        product, artifact = self.uses[key]
        use = uses.of(product)
        record = self.record(product, artifact)
        label = use.label(artifact, record)
        refused = self._refused(use, artifact, record)
        if refused is not None:
            record.update(refused)
            return batch.Item(key, label, record)
        assert artifact.meta is not None  # an artifact without a usable meta.json has a problem
        job, extra_s = use.job(self, os.path.abspath(artifact.folder), artifact.meta, record)
        return batch.Item(key, label, record, job, extra_s=extra_s)

    def _refused(self, use: Use, artifact: Artifact, record: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The fields of a use decided here, or None where it runs. Decided in the parent, an untrusted folder
        starts no process: nothing of it is unpickled or imported."""
        if artifact.problem is not None and use.refuses_damaged:
            return use.damaged(artifact.problem)
        assert artifact.meta is not None  # only an artifact with a usable meta.json describes a package
        distrust = None if self.trust else untrusted(artifact.folder, artifact.meta, self.signing_key)
        if distrust is not None:
            return {
                "status": LoadStatus.UNTRUSTED.value,
                "error_type": "UntrustedArtifact",
                "error_message": "untrusted artifact: %s; pass --trust to load folders you made or trust" % distrust,
            }
        described = use.described(record)
        if described is not None:
            return described
        found, missing = use.available(self, record)
        return None if found is not None else use.lacking(missing)

    def cache_key(self, item: batch.Item) -> Optional[str]:
        """The key of a use's result (``uses.cache_key``)."""
        product, artifact = self.uses[item.key]
        return uses.cache_key(
            product, artifact, self.env["variant"], self.compiler, self.device, self.gpu, self.build_fields()
        )

    def reusable(self, item: batch.Item, entry: Dict[str, Any], cache: reuse.ResultCache) -> bool:
        """The files must still be what meta.json lists: a damaged program or package is loaded, and found damaged."""
        artifact = self.uses[item.key][1]
        return artifact.meta is not None and layout.verify(artifact.folder, artifact.meta) is None

    def finished(self, item: batch.Item, result: Dict[str, Any]) -> None:
        own_keys(item.record)

    def died(self, item: batch.Item) -> None:
        product = self.uses[item.key][0]
        what, done = product.noun, product.used
        item.record.update(
            status=LoadStatus.CRASH.value,
            error_type="matrix.worker.loader.LoaderDied",
            error_message="the load command died while this %s %s (killed by it or from"
            " outside); recorded as a crash and not %s again without --force" % (what, done, done),
        )

    def warm_up(self) -> None:
        if self.can_load:
            first_use.load()  # imports only: loads are forked from a process that never exported


own_keys = uses.own_keys


def execute(options: LoadOptions) -> Dict[str, int]:
    """Load the selected artifacts; returns counts per status of the loads recorded now."""
    found = [a for a in layout.discover(options.artifacts) if layout.selected(a, options.select)]
    if options.dependency_set is not None:
        found = [a for a in found if saved_with(a) == options.dependency_set]
        if not found:
            say(
                "nothing under %s was saved with %s"
                % (", ".join(options.artifacts), options.dependency_set or "torch alone")
            )
            return {}
    if not found:
        raise UserError("nothing selected: no artifact under %s matches --select %s"
                        % (", ".join(options.artifacts), " ".join(options.select or ["*"])))  # fmt: skip
    found = on_device(found, options.device, options.artifacts)
    key = None if options.trust else signing.verifying_key()
    version = installed_torch_version()
    variant = options.variant or variant_of(version)
    python = artifacts.python_version()
    name = file_name(version, variant, python)[: -len(".jsonl")] + dependencies.set_suffix(options.dependency_set or "")
    settings = options.settings(os.path.join(options.out, name + ".jsonl"))
    # Packages count as artifacts in the plan's line; each one's progress line names its file (…/aoti.pt2).
    loads = LoadBatch(found, version, variant, python, key, options.trust, option_values(options), options.device)
    return batch.execute(loads, settings, version, variant)


def on_device(found: List[Artifact], device: str, roots: Sequence[str]) -> List[Artifact]:
    """The artifacts of ``found`` saved on ``device``; says how many others were left out, and is bad input where
    every one was saved on another device (their tensors live there: a program is loaded where it was saved)."""
    mine = [a for a in found if a.device == device]
    others = collections.Counter(a.device for a in found if a.device != device)
    if not others:
        return mine
    counts = ", ".join("%d on %s" % (n, name) for name, n in sorted(others.items()))
    hint = " or ".join("--device %s" % name for name in sorted(others))
    if not mine:
        raise UserError("--device %s: no program selected under %s was saved on %s (%s); %s loads them"
                        % (device, ", ".join(roots), device, counts, hint))  # fmt: skip
    say("left out the programs saved on another device than %s (%s): %s loads them" % (device, counts, hint))
    return mine


def saved_with(artifact: Artifact) -> str:
    """The set of packages beside torch that an artifact was saved with ("" for torch alone)."""
    return artifact.dependency_set


def main(options: LoadOptions) -> int:
    counts = execute(options)
    sys.stderr.write(batch.summary(counts, TALLIES, "nothing to load") + "\n")
    untrusted = counts.get(LoadStatus.UNTRUSTED.value, 0)  # an untrusted program's compile is its load's twin
    if untrusted:
        sys.stderr.write(
            "warning: %d saved program(s) or package(s) not loaded: not signed with this machine's signing key"
            " (their records say why); `load --trust` loads folders you made or trust, %s gives the key that"
            " signed them\n" % (untrusted, signing.KEY_VARIABLE)
        )
    return 0
