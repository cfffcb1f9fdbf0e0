"""What the front page's verdicts say of the products (:func:`matrix.records.product_uses.verdicts`, judged once and
held by the model as ``promises``): per product, a titled line on the promise its declaration names, each linking
the product's section of the saved-programs page, with every pair.

Against upstream's promise (``promised_from``): is it kept on every pair it covers, and do the releases load their
own uses (an exception where not). Without one: each (made-on, used-on) pair tried, kept or not.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from matrix.contract.schema import MODES
from matrix.records import store
from matrix.records.epochs import Pair, Promise
from matrix.records.product_uses import Verdict
from matrix.report import artifacts
from matrix.report import document as d
from matrix.report import markdown as md

CAUSE_LIMIT = 70  # characters of a failure named in a verdict


def verdict(found: Sequence[Verdict]) -> Tuple[d.Item, ...]:
    """The verdicts' lines, each a titled item linking the product's section of the saved-programs page."""
    items = []
    for v in found:
        every = d.link("every pair", d.page(artifacts.NAME, artifacts.anchor(v.product)))
        items += [d.Item(d.phrase(said, " (", every, ")"), title=title) for title, said in lines(v)]
    return tuple(items)


def _modes(v: Verdict) -> str:
    """``non-strict mode; strict mode not run``: the modes tried, and those that were not."""
    unrun = [m for m in MODES if m not in v.modes]
    said = "%s mode" % " and ".join(v.modes) if v.modes else "no mode"
    return said + ("; %s mode not run" % " and ".join(unrun) if unrun else "")


def _failed(p: Pair) -> str:
    """``2.6.0 → 2.10.0: 0 of 9 (the failure)``; a release's own uses name it once."""
    cause = p.failure if len(p.failure) <= CAUSE_LIMIT else p.failure[: CAUSE_LIMIT - 1] + "…"
    pair = p.made if p.made == p.used else "%s → %s" % (p.made, p.used)
    return "%s: %d of %d (%s)" % (pair, p.passed, p.tried, cause)


def _by_maker(pairs: Sequence[Pair], order: Sequence[str]) -> str:
    """``2.6.0 → 2.7.1–2.15.0; 2.7.1 → 2.8.0–2.15.0``: the using builds of each making build, as spans; ``each of
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


def lines(v: Verdict) -> List[Tuple[str, str]]:
    """A product's verdict lines, (title, text)."""
    p = v.product
    if v.promise is None:
        broken = [pair for pair in v.pairs if not pair.kept]
        said = "%s on %d of %s" % (p.promise, len(v.pairs) - len(broken), d.plural(len(v.pairs), "pair"))
        said += "; not on %s" % "; ".join(_failed(pair) for pair in broken) if broken else ""
        return [("%s (%s)" % (p.many, _modes(v)), said + ".")]
    return _promised(v, v.promise)


def _promised(v: Verdict, w: Promise) -> List[Tuple[str, str]]:
    """The lines of a product upstream promises something of: the promise pair by pair, then the exceptions."""
    p, found = v.product, []
    order = store.ordered(label for pair in w.covered for label in (pair.made, pair.used))
    if w.covered or w.own:
        if not w.covered:
            said = "no %s %s on %s or later was %s on a newer release" % (p.noun, p.made, w.promised_from, p.used)
        elif not w.broken:
            tried = "the 1 pair tried" if len(w.covered) == 1 else "all %d pairs tried" % len(w.covered)
            said = "kept on %s (%s): %s" % (tried, p.promise, _by_maker(w.covered, order))
        else:
            said = "broken on %d of the %s tried (%s): %s; kept: %s" % (
                len(w.broken), d.plural(len(w.covered), "pair"), p.promise,
                "; ".join(_failed(pair) for pair in w.broken), _by_maker([x for x in w.covered if x.kept], order),
            )  # fmt: skip
        found.append(("%s, backward promise (%s)" % (p.many, _modes(v)), said + "."))
    if w.own:
        if w.own_failing:
            said = "%d of %d releases do not load every %s they %s themselves: %s." % (
                len(w.own_failing), len(w.own), p.noun, p.made, "; ".join(_failed(pair) for pair in w.own_failing)
            )  # fmt: skip
        else:
            said = "every one of the %d releases loads the %ss it %s." % (len(w.own), p.noun, p.made)
        if w.before:
            said += " %s before %s (not promised), %s on a newer release: kept on %d of %s." % (
                p.made.capitalize(), w.promised_from, p.used, sum(x.kept for x in w.before),
                d.plural(len(w.before), "pair"),
            )  # fmt: skip
        if w.older:
            said += " %s on an older release (not promised): kept on %d of %s." % (
                p.used.capitalize(), sum(x.kept for x in w.older), d.plural(len(w.older), "pair")
            )  # fmt: skip
        found.append(("%s, exceptions" % p.many, said))
    return found
