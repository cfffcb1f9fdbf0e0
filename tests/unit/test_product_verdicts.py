"""The products' verdicts (matrix.records.product_uses.verdicts and their words, matrix.report.artifacts) on
hand-written package and compile records: upstream's promise kept or broken pair by pair, a release that cannot load
its own packages named as an exception, what nothing promises counted apart, and a mode that did not run said rather
than counted."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pandas as pd

from matrix.contract.products import COMPILE, PACKAGE
from matrix.contract.schema import AOTI_COMPILE_KEYS, AOTI_LOAD_KEYS
from matrix.records import product_uses
from matrix.records.product_uses import Verdict
from matrix.report import artifacts as words
from unit.test_aoti_compiles import compile_record
from unit.test_aoti_loads import package_load

CODECACHE = "AttributeError: module 'torch._inductor' has no attribute 'codecache'"
RELEASES = ("2.5.1", "2.6.0", "2.8.0", "2.10.0")


def frame(rows: List[Dict[str, Any]], keys: Any) -> pd.DataFrame:
    return pd.DataFrame({key: [r.get(key) for r in rows] for key in keys}, dtype=object)


def load(compiled: str, loaded: str, status: str = "pass", **extra: Any) -> Dict[str, Any]:
    return package_load(compiled, loaded, mode="non-strict", status=status, **extra)


def records() -> List[Dict[str, Any]]:
    rows = []
    for i, made in enumerate(RELEASES):
        for used in RELEASES:
            if used == "2.10.0" and made == "2.10.0":
                # 2.10.0 cannot load the packages it compiled itself.
                rows.append(load(made, used, "load-error", error_type="AttributeError", error_message=CODECACHE[16:]))
            elif used == "2.8.0" and made == "2.6.0":
                rows.append(load(made, used, "run-error", error_type="RuntimeError", error_message="wrong shape"))
            elif RELEASES.index(used) < i:
                rows.append(load(made, used, "load-error", error_type="RuntimeError", error_message="newer format"))
            elif made == "2.5.1" and used != made:
                rows.append(load(made, used, "not-applicable"))  # no loader for that file: not tried
            else:
                rows.append(load(made, used))
    return rows


def judged() -> Tuple[Verdict, Verdict]:
    packages = product_uses.judge(PACKAGE, frame(records(), AOTI_LOAD_KEYS))
    compiles = product_uses.judge(
        COMPILE,
        frame(
            [
                compile_record("2.6.0", "2.8.0", mode="non-strict"),
                compile_record("2.6.0", "2.10.0", status="error", failed_step="load", mode="non-strict",
                               error_type="AttributeError", error_message=CODECACHE[16:]),
            ],
            AOTI_COMPILE_KEYS,
        )
    )  # fmt: skip
    found, compiled = product_uses.verdicts([packages, compiles])
    assert (found.product, compiled.product) == (PACKAGE, COMPILE) and compiled.promise is None
    return found, compiled


def test_each_pair_is_judged_by_what_the_promise_covers() -> None:
    found, compiled = judged()
    v = found.promise
    assert v is not None
    assert [(p.made, p.used, p.passed, p.tried) for p in v.covered] == [
        ("2.6.0", "2.8.0", 0, 1), ("2.6.0", "2.10.0", 1, 1), ("2.8.0", "2.10.0", 1, 1),
    ]  # fmt: skip
    assert [(p.made, p.used) for p in v.broken] == [("2.6.0", "2.8.0")]
    assert v.broken[0].failure == "run-error: RuntimeError: wrong shape"
    # A release loading its own packages is not a pair of the promise: its failures are exceptions, named.
    assert [(p.made, p.passed, p.tried) for p in v.own_failing] == [("2.10.0", 0, 1)]
    assert "codecache" in v.own_failing[0].failure
    assert len(v.own) == 4
    # Compiled before 2.6 and loaded on a newer release: not tried (no loader), so no pair at all.
    assert v.before == ()
    # Loaded on an older release: nothing promises it; counted apart.
    assert len(v.older) == 6 and not any(p.kept for p in v.older)
    assert [(p.made, p.used, p.kept) for p in compiled.pairs] == [("2.6.0", "2.8.0", True),
                                                                   ("2.6.0", "2.10.0", False)]  # fmt: skip
    assert found.modes == compiled.modes == ("non-strict",)


def test_the_words_name_the_broken_pairs_the_exceptions_and_the_mode_not_run() -> None:
    lines = dict(line for v in judged() for line in words.lines(v))
    promise = lines["AOTInductor packages, backward promise (non-strict mode; strict mode not run)"]
    assert promise.startswith("broken on 1 of the 3 pairs tried")
    assert "2.6.0 → 2.8.0: 0 of 1 pass (run-error: RuntimeError: wrong shape)" in promise
    exceptions = lines["AOTInductor packages, exceptions"]
    assert exceptions.startswith("1 of 4 releases do not load every package they compiled themselves: 2.10.0: 0 of 1")
    assert "Loaded on an older release (not promised): kept on 0 of 6 pairs." in exceptions
    compiles = lines["AOTInductor compiles (non-strict mode; strict mode not run)"]
    assert "on 1 of 2 pairs; not on 2.6.0 → 2.10.0: 0 of 1 pass (load error: AttributeError" in compiles
    # No line counts strict mode, which did not run.
    assert not any("strict: 0" in said or "0 of 0" in said for said in lines.values())


def test_a_promise_kept_everywhere_reads_as_one_span() -> None:
    rows = [load(made, used) for i, made in enumerate(RELEASES[1:]) for used in RELEASES[1:][i:]]
    uses = [product_uses.judge(PACKAGE, frame(rows, AOTI_LOAD_KEYS)), product_uses.judge(COMPILE, pd.DataFrame())]
    (found,) = product_uses.verdicts(uses)
    (promise, _) = [said for _, said in words.lines(found)]
    assert promise.endswith("each of 2.6.0–2.8.0 on every newer build up to 2.10.0.")
    assert product_uses.verdicts([product_uses.judge(p, pd.DataFrame()) for p in (PACKAGE, COMPILE)]) == ()
    # Each line links the product's section of the saved-programs page.
    (item, _) = words.verdict([found])
    assert item.parts[-2].target.anchor == "compiled-packages-aotinductor-across-releases"
