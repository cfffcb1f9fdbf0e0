"""How to make a report again: the commands, in order, that run its builds and build it (the front page's "Run it
again").

The commands are the noxfile's: the ``run`` sessions take the builds as ``EXPORT_MATRIX_TORCH`` selection words (a
PyPI build by its release, any other by its local tag), and ``--with`` sets as ``EXPORT_MATRIX_WITH``; a report
that shows an AOTInductor run's packages and compiles names that run's selection and ``report --stages-from``. Where
the cells carry the outcome of an opt-in stage (a declared one: ``Stage.shown``), the run names it in ``--stages``;
where those outcomes came from a run of their own (``report --stages-from``, kept in ``stamp.json``), that run is
made again apart, with its builds, cases and modes, into a folder that the report command joins.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract import stages
from matrix.contract.products import PRODUCTS
from matrix.envs.releases import DEFAULT_VARIANT
from matrix.records import devices, stage_outcomes, transitions
from matrix.records.scope import Build

if TYPE_CHECKING:
    from matrix.report.findings import Findings
    from matrix.report.stamp import Source

# How the commands name where the cells ran: the run sessions choose CUDA on a machine with a GPU unless told.
DEVICE_WORDS = {"cpu": "on the CPU", "cuda": "on CUDA (a machine with an NVIDIA GPU)"}
RECORDS = "results"  # where the commands put the records of each run but the main one, a folder each
AOTI_RECORDS = RECORDS + "/aoti"  # the AOTInductor selection's


def selection_word(build: Build) -> str:
    """The ``EXPORT_MATRIX_TORCH`` word that selects a build: ``2.15.0`` (PyPI's), ``2.13.0+cpu`` (another index)."""
    version, variant = build
    release = transitions.base(version)
    if variant == DEFAULT_VARIANT:
        return release
    return version if "+" in version else "%s+%s" % (release, variant)


def _by_device(builds: Iterable[Tuple[str, str, str]]) -> Dict[str, List[str]]:
    """Each device of ``builds`` (device, torch version, variant) in their order, with its builds' selection words."""
    found: Dict[str, List[str]] = {}
    for device, release, variant in builds:
        words = found.setdefault(str(device), [])
        word = selection_word((str(release), str(variant)))
        if word not in words:
            words.append(word)
    return found


def _nox(builds: Sequence[str], sessions: str, device: str, options: str) -> str:
    """The run sessions' command for ``builds`` on ``device``; ``options`` go after ``--device``."""
    return 'EXPORT_MATRIX_TORCH="%s" nox -s %s -- --device %s%s' % (" ".join(builds), sessions, device, options)


def commands(f: Findings) -> List[Tuple[str, str]]:
    """How to make this report again: (what it does, command), in the order to run them. Each device the cells ran
    on gets its own commands, which name it: the run sessions would otherwise choose CUDA where a GPU is visible.
    An opt-in stage whose outcomes came from a run of their own (``report --stages-from``) is run apart, as that run
    was, into a folder of its own that the report then joins."""
    found = []
    if f.stamp is not None and f.stamp.commit:
        found.append(("Check out the code that built this report", "git checkout %s" % f.stamp.commit))
    # Each device the report's cells ran on (the main device first), with the selection words of its builds.
    frames = [frame for frame in (f.cells, f.elsewhere) if not frame.empty]
    ran = _by_device(b for frame in frames for b in zip(devices.of(frame), frame["release"], frame["variant"]))
    by_device = ran or {devices.DEFAULT: [selection_word(b) for b in f.scope.builds]}
    sessions = "run load" if not f.loads.empty else "run"
    apart = _apart(f)
    joined = {name for source, _ in apart for name in source.shows}
    opt_in = [s.name for s in stage_outcomes.ran_in(f.cells) if s.name not in stages.DEFAULT and s.name not in joined]
    modes = tuple(sorted(set(f.cells["mode"].astype(str)))) if "mode" in f.cells.columns else ()
    options = _mode_option(modes) + _stages_option(opt_in)
    with_sets = sorted({str(w) for w in f.cells.get("with_set", pd.Series(dtype=object)).dropna() if str(w)})
    also = " with the stages %s too" % ", ".join(opt_in) if opt_in else ""
    also += ", then load every saved program on each build" if sessions == "run load" else ""
    for device, builds in by_device.items():
        where, command = DEVICE_WORDS.get(device, "on " + device), _nox(builds, sessions, device, options)
        said = "Install each build of this report and run every case in %s %s%s" % (_modes_words(modes), where, also)
        found.append((said, command))
        for named in with_sets:
            said = "The cells run with the --with set %s, %s" % (named, where)
            found.append((said, 'EXPORT_MATRIX_WITH="%s" %s' % (named, command)))
    shows_aoti = any(not u.empty for u in f.uses[1:])  # a product after the saved programs
    folders = [AOTI_RECORDS] if shows_aoti else []
    if shows_aoti:
        said = "Run the AOTInductor selection (its cases, releases and compiles of older programs), into %s"
        found.append((said % AOTI_RECORDS, "EXPORT_MATRIX_TORCH=aoti nox -s run load -- --out %s" % AOTI_RECORDS))
    for source, folder in apart:
        found += _run_apart(f, source, folder)
        folders.append(folder)
    joins = "".join(" --stages-from %s" % folder for folder in folders)
    said = "Build the report (Markdown, tables, charts, the site) from the records"
    found.append((said, "export-matrix report results/latest --out reports/local" + joins))
    return found


def _mode_option(modes: Sequence[str]) -> str:
    """``--mode`` where the cells ran in one mode alone; the run sessions run both otherwise."""
    return " --mode %s" % modes[0] if len(modes) == 1 else ""


def _modes_words(modes: Sequence[str]) -> str:
    return "%s mode" % modes[0] if len(modes) == 1 else "both modes"


def _stages_option(opt_in: Sequence[str]) -> str:
    """``--stages`` with the default stages and ``opt_in`` (in declared order); "" where there is none to add."""
    return " --stages %s" % ",".join(stages.DEFAULT + tuple(s.name for s in stages.selected(opt_in))) if opt_in else ""


def _apart(f: Findings) -> List[Tuple[Source, str]]:
    """The joined runs that gave the report opt-in stages' outcomes and no product (a product's run is the
    AOTInductor selection's), each with the folder the commands put its records in: ``results/onnx``."""
    products = {product.name for product in PRODUCTS}
    found: List[Tuple[Source, str]] = []
    taken: Dict[str, int] = {}
    for source in f.sources:
        if not source.shows or products & set(source.shows):
            continue
        folder = "%s/%s" % (RECORDS, "-".join(source.shows))
        taken[folder] = taken.get(folder, 0) + 1  # two runs of one stage (other builds): results/onnx-2
        found.append((source, folder + ("-%d" % taken[folder] if taken[folder] > 1 else "")))
    return found


def _run_apart(f: Findings, source: Source, folder: str) -> List[Tuple[str, str]]:
    """The commands that run a joined run again as it ran: its builds on each of its devices, its cases (all of
    the report's, or those it named), its modes, with its stages, into ``folder``."""
    words = selected(f, source)
    select = "" if words is None else " --select %s" % " ".join(map(shlex.quote, words))
    named = "the stage%s %s" % ("s" if len(source.shows) > 1 else "", ", ".join(source.shows))
    found = []
    for device, builds in _by_device(source.builds).items():
        found.append((
            "Run %s apart, as the run whose outcomes this report shows did (its builds, %s, %s), %s, into %s" % (
                named, "its cases" if select else "every case", _modes_words(source.modes),
                DEVICE_WORDS.get(device, "on " + device), folder),
            _nox(builds, "run", device, "%s%s%s --out %s" % (
                _mode_option(source.modes), select, _stages_option(source.shows), folder)),
        ))  # fmt: skip
    return found


def selected(f: Findings, source: Source) -> Optional[List[str]]:
    """``--select``'s words for the cases a joined run ran: a folder of which they hold every case of the report as
    ``folder/*``, any other case by its name; None where they are every case of the report."""
    everything = set(f.cells["case"].astype(str)) if "case" in f.cells.columns else set()
    chosen, words, whole = set(source.cases), [], set()
    if everything <= chosen:
        return None
    for case in sorted(chosen):
        folder = case.rpartition("/")[0]
        if folder in whole:
            continue
        if folder and {c for c in everything if c.rpartition("/")[0] == folder} <= chosen:
            whole.add(folder)
            words.append(folder + "/*")
        else:
            words.append(case)
    return words
