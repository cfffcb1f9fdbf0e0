"""``export-matrix bisect``: find the first release where a case's status (or graph) changes.

The search is a pure function over any ordered list of versions and a ``probe(version)``
callable, so it works the same for releases, patch releases or nightly builds. The
command's probe installs (or reuses) an environment and runs the case there; versions
whose environment already exists are preferred when they are near the midpoint, so a
bisection installs as few environments as it can.
"""

from __future__ import annotations

import argparse
import datetime
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Generic, Hashable, List, Mapping, Optional, Sequence, Tuple, TypeVar

from ..contract import dependencies
from ..contract.case import CaseInfo
from ..contract.errors import FAILED, UNAVAILABLE, UserError
from ..contract.options import (
    DEFAULT_TIMEOUT_S,
    add_mode,
    add_timeout,
    add_variant,
    add_with,
    positive_seconds,
    requirements,
)
from ..envs import environments, pythons, releases
from . import nightly_range
from .probe import Probed, cases_request, probe_case, validate_case

V = TypeVar("V", bound=Hashable)


class Skip(Exception):
    """A version that cannot be probed (its environment does not install): the search goes around it."""


class BisectError(UserError):
    """The search cannot start: too few versions, or an end point that cannot be probed."""

    exit_code = UNAVAILABLE


class BisectInputError(UserError):
    """Bad input to bisect: releases that cannot be bisected; the message says which."""


@dataclass(frozen=True)
class Step(Generic[V]):
    """One probe: the version, what it gave, and whether that counts as good, bad or skipped."""

    version: V
    value: Any
    verdict: str  # "good", "bad" or "skipped"
    reason: Optional[str] = None


@dataclass(frozen=True)
class Outcome(Generic[V]):
    """Where the value changes: the last version like the first one and the first one unlike it."""

    good_value: Any
    bad_value: Any
    last_good: Optional[V]
    first_bad: Optional[V]  # None when the end points agree: nothing to find
    untested: Tuple[V, ...]  # skipped versions between last_good and first_bad: any of them may be the first
    steps: Tuple[Step[V], ...]

    @property
    def changed(self) -> bool:
        return self.first_bad is not None

    @property
    def probes(self) -> int:
        return len(self.steps)


def _pick(open_: Sequence[int], lo: int, hi: int, preferred: Callable[[int], bool]) -> int:
    """The index to probe next: the one nearest the middle, or a preferred one in the middle third.

    Taking a preferred index only from the middle third still shrinks the interval to at
    most two thirds, so the number of probes stays logarithmic.
    """
    middle = (lo + hi) / 2
    third = (hi - lo) / 3
    central = [i for i in open_ if lo + third <= i <= hi - third and preferred(i)]
    pool = central or list(open_)
    return min(pool, key=lambda i: (abs(i - middle), i))


def search(
    versions: Sequence[V],
    probe: Callable[[V], Any],
    prefer: Optional[Callable[[V], bool]] = None,
    on_step: Optional[Callable[[Step[V]], None]] = None,
) -> Outcome[V]:
    """Binary search for the first version whose probe differs from the first version's.

    ``versions`` are ordered oldest first; the first is the known-good end, the last the
    known-bad end. ``probe`` may raise ``Skip`` for a version it cannot test. Each version
    is probed at most once. With more than one change between the ends, this finds one
    of them, as any bisection does.
    """
    if len(versions) < 2:
        raise BisectError("bisect needs at least two versions, got %d" % len(versions))
    if len(set(versions)) != len(versions):
        raise BisectError("the versions to bisect contain duplicates")
    steps: List[Step[V]] = []

    def record(step: Step[V]) -> None:
        steps.append(step)
        if on_step is not None:
            on_step(step)

    def probe_end(version: V, name: str) -> Any:
        try:
            return probe(version)
        except Skip as exc:
            record(Step(version, None, "skipped", str(exc)))
            raise BisectError("cannot probe the %s end %s: %s" % (name, version, exc))

    good = probe_end(versions[0], "good")
    record(Step(versions[0], good, "good"))
    bad = probe_end(versions[-1], "bad")
    if bad == good:
        record(Step(versions[-1], bad, "good"))
        return Outcome(good, bad, versions[-1], None, (), tuple(steps))
    record(Step(versions[-1], bad, "bad"))

    lo, hi = 0, len(versions) - 1
    skipped: set = set()
    preferred = (lambda i: bool(prefer(versions[i]))) if prefer else (lambda i: False)
    while True:
        open_ = [i for i in range(lo + 1, hi) if i not in skipped]
        if not open_:
            break
        index = _pick(open_, lo, hi, preferred)
        version = versions[index]
        try:
            value = probe(version)
        except Skip as exc:
            skipped.add(index)
            record(Step(version, None, "skipped", str(exc)))
            continue
        if value == good:
            lo = index
            record(Step(version, value, "good"))
        else:
            hi, bad = index, value
            record(Step(version, value, "bad"))
    untested = tuple(versions[i] for i in sorted(skipped) if lo < i < hi)
    return Outcome(good, bad, versions[lo], versions[hi], untested, tuple(steps))


# --- the command --------------------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Find the first release, or the first nightly, where a case's status (or graph hash) differs from the good"
        " end's. Exit status: 0 found, 1 the two ends agree, 2 bad input, 3 an end could not be installed or run."
    )
    parser.add_argument("case", metavar="CASE_FILE", help="a case module (see cases/ for the format)")
    parser.add_argument(
        "--good",
        help="a release where the case behaves as expected, e.g. 2.5.1; before --bad nightly, a release (the search"
        " starts at the first nightly after its branch cut) or a nightly's day, nightly:YYYY-MM-DD",
    )
    parser.add_argument(
        "--bad",
        help="a later release where it does not, e.g. 2.9.1; or nightly (the index's newest) or nightly:YYYY-MM-DD:"
        " then the search runs over the nightlies the index holds between the ends",
    )
    parser.add_argument(
        "--versions",
        nargs="+",
        metavar="VERSION",
        help="bisect over exactly these versions, oldest first (e.g. nightly builds from an index"
        " set with the variant's override variable); replaces --good/--bad",
    )
    add_mode(parser, default="strict", both=False)
    add_with(parser)
    parser.add_argument(
        "--on",
        choices=("status", "hash"),
        default="status",
        help="what must change: the cell's status, or its exported graph's hash",
    )
    add_variant(parser, "wheel variant (default %s)" % releases.DEFAULT_VARIANT, default=releases.DEFAULT_VARIANT)
    parser.add_argument("--python", default=None, metavar="X.Y", help="Python of the environments")
    add_timeout(parser, "cell")
    parser.add_argument("--out", default=None, metavar="DIR", help="keep the records here (default: discard them)")
    parser.add_argument("--verbose", "-v", action="store_true", help="show the worker's output")  # fmt: skip


@dataclass(frozen=True)
class BisectOptions:
    """The options of ``export-matrix bisect``."""

    case: str
    good: Optional[str] = None
    bad: Optional[str] = None
    versions: Optional[Tuple[str, ...]] = None
    mode: str = "strict"
    on: str = "status"
    variant: str = releases.DEFAULT_VARIANT
    python: Optional[str] = None
    timeout: float = DEFAULT_TIMEOUT_S
    out: Optional[str] = None
    verbose: bool = False
    with_requirements: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.versions is not None:
            object.__setattr__(self, "versions", tuple(self.versions))
        object.__setattr__(self, "with_requirements", requirements("--with", self.with_requirements))
        object.__setattr__(self, "timeout", positive_seconds("--timeout", self.timeout))


OPTIONS = BisectOptions


def plan(options: BisectOptions) -> Tuple[List[environments.Spec], str]:
    """The environments to bisect over, oldest first, and the Python they use."""
    matrix = releases.default_matrix()
    try:
        variant = matrix.variant(options.variant)
        for given in [*(options.versions or []), options.good or "", options.bad or ""]:
            tag = given.partition("+")[2]
            if tag and tag != variant.local_tag:
                raise BisectInputError(
                    "%s is not a build of the %s variant; pass --variant for its tag" % (given, variant.name)
                )
        if options.versions:
            if options.good or options.bad:
                raise BisectInputError("give either --versions or --good/--bad, not both")
            chosen = [matrix.release_like(v) for v in options.versions]
            keys = [r.key for r in chosen]
            if keys != sorted(keys):
                raise BisectInputError("--versions must be listed oldest first")
        else:
            if not (options.good and options.bad):
                raise BisectInputError("give --good and --bad releases (or --versions)")
            for version in (options.good, options.bad):
                matrix.release(version.split("+", 1)[0])
            chosen = matrix.between(options.good, options.bad, variant, options.python)
    except releases.ReleaseError as exc:
        raise BisectInputError(str(exc))
    python = options.python or _common_python(chosen)
    kept = [r for r in chosen if r.supports(python) and variant.builds(r)]
    if len(kept) < 2:
        raise BisectInputError(
            "fewer than two releases to bisect for variant %s and Python %s" % (variant.name, python)
        )
    return [environments.Spec(releases.Build(r, variant), python) for r in kept], python


def _common_python(chosen: Sequence[releases.Release]) -> str:
    """A Python every release supports: this one if possible, else the newest shared one."""
    shared = set(chosen[0].pythons).intersection(*(release.pythons for release in chosen[1:]))
    if not shared:
        raise BisectInputError("no Python version has wheels of every release in the range; pass --python")
    current = pythons.current_python()
    if current in shared:
        return current
    return max(shared, key=releases.python_key)


def value_of(cell: Optional[Dict[str, Any]], on: str) -> Any:
    """What the search compares: the status, or the graph hash (or the status where there is no graph)."""
    if cell is None:
        return None
    if on == "hash":
        return cell.get("graph_hash") or "no graph (%s)" % cell.get("status")
    return cell.get("status")


def describe(value: Any, cell: Optional[Dict[str, Any]]) -> str:
    text = str(value)
    if cell is not None and cell.get("error_type"):
        text += " (%s: %s)" % (str(cell["error_type"]).rsplit(".", 1)[-1], str(cell.get("error_message") or "")[:80])
    return text


def probe_cell(
    spec: environments.Spec,
    options: BisectOptions,
    info: CaseInfo,
    out: Path,
    seen: Optional[Dict[str, Probed]] = None,
) -> Dict[str, Any]:
    """The case's winning cell in the chosen mode on one release; Skip where there is none to compare.

    ``seen`` keeps what each version left, by version: whether its environment was installed, its git version.
    """
    folder = out / spec.name
    request = cases_request(
        (info.path,), [options.mode], folder, options.timeout, options.verbose, added=options.with_requirements
    )
    probed = probe_case(spec, info, request, verbose=options.verbose)
    if seen is not None:
        seen[spec.build.torch_version] = probed
    if probed.env_error is not None:
        raise Skip("its environment could not be installed (see %s)" % folder)
    cell = probed.cell(options.mode)
    if cell is None:
        raise Skip(probed.problem or "the worker wrote no record")
    return cell


@dataclass(frozen=True)
class Plan:
    """The environments to search, oldest first, and how they were chosen."""

    specs: Tuple[environments.Spec, ...]
    python: str
    what: str  # "releases of the pypi variant", "nightlies of the nightly-cpu index"
    notes: Tuple[str, ...] = ()
    days: Mapping[str, datetime.date] = field(default_factory=dict)  # a nightly's day, by its version

    def label(self, version: str) -> str:
        day = self.days.get(version)
        return "%s %s" % (day, version) if day else version


def plan_search(options: BisectOptions) -> Plan:
    """Releases between --good and --bad, or the nightlies an index holds where --bad is a nightly."""
    matrix = releases.default_matrix()
    for flag, word in (("--good", options.good), ("--bad", options.bad)):
        if word and not word[:1].isdigit():
            try:  # a word, not a version: one that names nothing is said before anything else
                matrix.resolve(word, None if "+" in word else nightly_range.channel_variant(options.variant))
            except releases.ReleaseError as exc:
                raise BisectInputError("%s: %s" % (flag, exc))
    if not nightly_range.asks_nightlies(matrix, options.bad):
        chosen, python = plan(options)
        return Plan(tuple(chosen), python, "releases of the %s variant" % chosen[0].build.variant.name)
    if options.versions:
        raise BisectInputError("give either --versions or --good/--bad, not both")
    if not options.good:
        raise BisectInputError("give --good: a release (2.15) or a nightly's day (nightly:YYYY-MM-DD)")
    found, python = nightly_range.find(matrix, options.good, str(options.bad), options.variant, options.python)
    specs = tuple(environments.Spec(matrix.pinned(found.channel, o.version), python) for o in found.nightlies)
    days = {spec.build.torch_version: nightly_range.day_of(o) for spec, o in zip(specs, found.nightlies)}
    what = "nightlies of the %s index" % found.channel.variant.name
    return Plan(specs, python, what, found.notes, days)


def main(options: BisectOptions) -> int:
    info = validate_case(options.case)
    found = plan_search(options)
    needed = dependencies.set_key((*info.dependencies, *options.with_requirements))
    by_version = {spec.build.torch_version: replace(spec, dependency_set=needed) for spec in found.specs}
    seen: Dict[str, Probed] = {}
    versions = list(by_version)
    listed = "%s to %s" % (found.label(versions[0]), found.label(versions[-1])) if found.days else " ".join(versions)
    print(
        "bisecting %s (%s, %s) over %d %s for Python %s: %s"
        % (info.name, options.mode, options.on, len(versions), found.what, found.python, listed)
    )
    for note in found.notes:
        print("  " + note)

    with tempfile.TemporaryDirectory(prefix="export-matrix-bisect-") as scratch:
        out = Path(options.out) if options.out else Path(scratch)

        def probe(version: str) -> Any:
            return value_of(probe_cell(by_version[version], options, info, out, seen), options.on)

        def prefer(version: str) -> bool:
            return environments.is_ready(by_version[version])

        def show(step: Step[str]) -> None:
            detail = (
                step.reason
                if step.verdict == "skipped"
                else describe(step.value, cell_of(seen, step.version, options.mode))
            )
            print("  %-12s %-8s %s" % (found.label(step.version), step.verdict, detail), flush=True)

        outcome = search(versions, probe, prefer, show)
    installed = sum(1 for probed in seen.values() if probed.installed)
    tally = "%d environment%s installed, %d probes" % (installed, "" if installed == 1 else "s", outcome.probes)
    if not outcome.changed:
        print(
            "no change: %s gives %s at both ends (%s and %s); %s"
            % (options.on, outcome.good_value, found.label(versions[0]), found.label(versions[-1]), tally)
        )
        return FAILED
    if outcome.untested:
        print(
            "not installed, and any of them may be the first unlike %s: %s"
            % (found.label(versions[0]), ", ".join(found.label(v) for v in outcome.untested))
        )
    good, bad = str(outcome.last_good), str(outcome.first_bad)
    if found.days:
        gits = [_git(seen.get(v)) for v in (good, bad)]
        link = nightly_range.compare_link(*gits) or "no compare link (a build without torch.version.git_version)"
        print(
            "first bad nightly: %s (git %s): %s; last good: %s (git %s): %s; commits: %s; %s"
            % (
                found.label(bad), gits[1], describe(outcome.bad_value, cell_of(seen, bad, options.mode)),
                found.label(good), gits[0], outcome.good_value, link, tally,
            )
        )  # fmt: skip
        return 0
    print(
        "first release where the %s %s differs from %s (%s): %s (%s); last like it: %s; %s."
        % (
            options.mode, options.on, versions[0], outcome.good_value, bad,
            describe(outcome.bad_value, cell_of(seen, bad, options.mode)), good, tally,
        )
    )  # fmt: skip
    return 0


def cell_of(seen: Mapping[str, Probed], version: str, mode: str) -> Optional[Dict[str, Any]]:
    probed = seen.get(version)
    return None if probed is None else probed.cell(mode)


def _git(probed: Optional[Probed]) -> Optional[str]:
    """The build's ``torch.version.git_version``, as the worker's environment record has it."""
    found = ((probed and probed.environment) or {}).get("torch_git_version")
    return str(found) if found else None
