"""The AOTInductor verdict in words (:func:`matrix.records.aoti_loads.verdict`'s), as the verdicts' lines of the
Markdown front page and of the site: each line a (title, plain text) pair that each page escapes and links itself."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from matrix.contract.schema import MODES
from matrix.records import store
from matrix.records.aoti_loads import AotiVerdict
from matrix.records.epochs import Pair
from matrix.report import markdown as md

# The heading of the packages' section on the saved-programs page, as a link names it.
ANCHOR = "compiled-packages-aotinductor-across-releases"
CAUSE_LIMIT = 70  # characters of a failure named in a verdict


def _modes(v: AotiVerdict) -> str:
    """``non-strict mode; strict mode not run``: the modes tried, and those that were not."""
    unrun = [m for m in MODES if m not in v.modes]
    said = "%s mode" % " and ".join(v.modes) if v.modes else "no mode"
    return said + ("; %s mode not run" % " and ".join(unrun) if unrun else "")


def _failed(p: Pair) -> str:
    """``2.6.0 → 2.10.0: 0 of 9 (the failure)``; a release's own packages name it once."""
    cause = p.failure if len(p.failure) <= CAUSE_LIMIT else p.failure[: CAUSE_LIMIT - 1] + "…"
    pair = p.made if p.made == p.used else "%s → %s" % (p.made, p.used)
    return "%s: %d of %d (%s)" % (pair, p.passed, p.tried, cause)


def _by_maker(pairs: Sequence[Pair], order: Sequence[str]) -> str:
    """``2.6.0 → 2.7.1–2.15.0; 2.7.1 → 2.8.0–2.15.0``: the loading builds of each making build, as spans; ``each of
    2.6.0–2.14.1 on every newer build up to 2.15.0`` where every making build reached every newer one."""
    used: Dict[str, List[str]] = {}
    for p in pairs:
        used.setdefault(p.made, []).append(p.used)
    every = all(
        made in order and sorted(loaded, key=order.index) == list(order[order.index(made) + 1 :])
        for made, loaded in used.items()
    )
    makers = [made for made in order if made in used]
    if every and len(makers) == len(used) and len(makers) > 1 and makers == list(order[: len(makers)]):
        return "each of %s on every newer build up to %s" % (md.release_spans(makers, order), order[-1])
    return "; ".join("%s → %s" % (made, md.release_spans(loaded, order)) for made, loaded in used.items())


def lines(v: Optional[AotiVerdict]) -> List[Tuple[str, str]]:
    """The verdict's lines, (title, text); none without packages or compiles."""
    if v is None:
        return []
    order = store.ordered(label for p in v.covered for label in (p.made, p.used))
    found = []
    if v.covered or v.own:
        promise = "a package compiled on %s or later loads and matches on every newer release" % v.promised_from
        if not v.covered:
            said = "no package compiled on %s or later was loaded on a newer release" % v.promised_from
        elif not v.broken:
            tried = "the 1 pair tried" if len(v.covered) == 1 else "all %d pairs tried" % len(v.covered)
            said = "kept on %s (%s): %s" % (tried, promise, _by_maker(v.covered, order))
        else:
            said = "broken on %d of the %s tried (%s): %s; kept: %s" % (
                len(v.broken), md.plural(len(v.covered), "pair"), promise,
                "; ".join(_failed(p) for p in v.broken), _by_maker([p for p in v.covered if p.kept], order),
            )  # fmt: skip
        found.append(("AOTInductor packages, backward promise (%s)" % _modes(v), said + "."))
    failing = v.own_failing
    if v.own:
        if failing:
            said = "%d of %d releases do not load every package they compiled themselves: %s." % (
                len(failing), len(v.own), "; ".join(_failed(p) for p in failing)
            )  # fmt: skip
        else:
            said = "every one of the %d releases loads the packages it compiled." % len(v.own)
        older = sum(p.kept for p in v.older)
        before = sum(p.kept for p in v.before)
        if v.before:
            said += " Compiled before %s (not promised), loaded on a newer release: kept on %d of %s." % (
                v.promised_from, before, md.plural(len(v.before), "pair")
            )  # fmt: skip
        if v.older:
            said += " Loaded on an older release (not promised): kept on %d of %s." % (
                older, md.plural(len(v.older), "pair")
            )  # fmt: skip
        found.append(("AOTInductor packages, exceptions", said))
    if v.compiles:
        broken = [p for p in v.compiles if not p.kept]
        said = "a program exported on an older release compiles, loads and matches on a newer one on %d of %s" % (
            len(v.compiles) - len(broken), md.plural(len(v.compiles), "pair")
        )  # fmt: skip
        if broken:
            said += "; not on %s" % "; ".join(_failed(p) for p in broken)
        found.append(("AOTInductor compiles (%s)" % _modes(v), said + "."))
    return found
