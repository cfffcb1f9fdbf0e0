"""The upgrade answer (matrix.records.upgrade) on hand-written tables: each question answered from its own table,
not tried kept apart from failing, the verdict of a case and the tallies of a pair."""

from __future__ import annotations

from typing import Any, Dict, List

import pandas as pd

from matrix.contract.schema import MODES
from matrix.records import upgrade
from matrix.records.upgrade import Answer


def cell(release: str, case: str, mode: str, status: str, error: str = "") -> Dict[str, Any]:
    return {"release": release, "case": case, "mode": mode, "status": status, "with_set": "",
            "error_type": "RuntimeError" if error else None, "error_message": error or None}  # fmt: skip


def used(made: str, on: str, case: str, mode: str, status: str, error: str = "") -> Dict[str, Any]:
    return {"saved_torch_version": made, "torch_version": on, "case": case, "mode": mode, "status": status,
            "with_set": "", "error_type": "RuntimeError" if error else None,
            "error_message": error or None}  # fmt: skip


def frame(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows)


CELLS = frame([
    # A model that exports on both releases, whose saved program does not load on the newer one.
    cell("2.5.1", "real_models/resnet", "strict", "pass"),
    cell("2.5.1", "real_models/resnet", "non-strict", "pass"),
    cell("2.15.0", "real_models/resnet", "strict", "pass"),
    cell("2.15.0", "real_models/resnet", "non-strict", "pass"),
    # A model that failed on the older release and exports on the newer: no program was saved, nothing to load.
    cell("2.5.1", "real_models/llama", "strict", "fail", "Unsupported: co_varnames"),
    cell("2.5.1", "real_models/llama", "non-strict", "fail", "TypeError: path"),
    cell("2.15.0", "real_models/llama", "strict", "pass"),
    cell("2.15.0", "real_models/llama", "non-strict", "pass"),
    # A case whose export breaks in strict mode only.
    cell("2.5.1", "models/cond", "strict", "pass"),
    cell("2.15.0", "models/cond", "strict", "mismatch", "outputs differ"),
    # A case the newer release cannot run: not applicable is no failure.
    cell("2.5.1", "models/scan", "non-strict", "not-applicable"),
    cell("2.15.0", "models/scan", "non-strict", "pass"),
    # A middle release, and a --with set's row that the answer leaves out.
    cell("2.10.0", "real_models/resnet", "strict", "pass"),
    {**cell("2.15.0", "real_models/resnet", "strict", "fail", "from the with set"), "with_set": "transformers"},
])  # fmt: skip
LOADS = frame(
    [
        # Each product also used on the release that made it: what it did with its own files.
        used("2.5.1", "2.5.1", "real_models/resnet", "strict", "pass"),
        used("2.5.1", "2.15.0", "real_models/resnet", "strict", "load-error", "Serialized version ['7', '3']\nmore"),
        used("2.5.1", "2.15.0", "real_models/resnet", "non-strict", "pass"),
        used("2.5.1", "2.15.0", "models/cond", "strict", "untrusted"),
        used("2.10.0", "2.15.0", "real_models/resnet", "strict", "pass"),
    ]
)
PACKAGES = frame(
    [
        used("2.5.1", "2.5.1", "real_models/resnet", "non-strict", "pass"),
        used(
            "2.5.1", "2.15.0", "real_models/resnet", "non-strict", "load-error", "Failed to find a generated cpp file"
        ),
    ]
)
COMPILES = frame(
    [
        used("2.5.1", "2.15.0", "real_models/resnet", "non-strict", "ok"),
        used("2.5.1", "2.15.0", "models/cond", "strict", "skipped"),
    ]
)


def answered() -> upgrade.Upgrade:
    return upgrade.Upgrades(CELLS, LOADS, PACKAGES, COMPILES).answer("2.5.1", "2.15.0")


def by_case(found: upgrade.Upgrade) -> Dict[str, upgrade.CaseAnswer]:
    return {c.case: c for c in found.cases}


def test_each_question_is_answered_from_its_own_table() -> None:
    resnet = by_case(answered())["real_models/resnet"]
    strict, loose = resnet.modes
    assert (strict.mode, loose.mode) == ("strict", "non-strict")
    assert [strict.answer(q) for q in upgrade.QUESTIONS] == [Answer.YES, Answer.NO, Answer.NOT_TRIED, Answer.NOT_TRIED]
    assert [loose.answer(q) for q in upgrade.QUESTIONS] == [Answer.YES, Answer.YES, Answer.NO, Answer.YES]
    # The error's first line is kept, to show why.
    assert strict.saved is not None and strict.saved.error == "RuntimeError: Serialized version ['7', '3']"
    # The --with set's failing row on 2.15.0 is not torch's answer.
    assert strict.after is not None and strict.after.status == "pass"


def test_the_verdict_names_what_the_upgrade_breaks() -> None:
    cases = by_case(answered())
    assert cases["real_models/resnet"].verdict == "breaks"
    assert cases["real_models/resnet"].breaks == (("strict", "saved"), ("non-strict", "package"))
    assert cases["models/cond"].breaks == (("strict", "export"),)
    # Failing on A and passing on B is a fix; nothing was saved on A, so no load is counted against it.
    llama = cases["real_models/llama"]
    assert llama.verdict == "fixed" and llama.breaks == ()
    assert all(m.answer("saved") is Answer.NOT_TRIED for m in llama.modes)
    # Not applicable on A is not a failure there: passing on B is simply "works".
    assert cases["models/scan"].verdict == "works"


def test_not_tried_is_never_a_failure() -> None:
    cond = by_case(answered())["models/cond"]
    (strict,) = cond.modes  # non-strict ran on neither release: no row for it
    assert strict.saved is not None and strict.saved.status == "untrusted"
    assert strict.answer("saved") is Answer.NOT_TRIED
    assert strict.answer("compile") is Answer.NOT_TRIED  # skipped: the program did not load to be compiled


def test_tallies_count_tried_answers_and_leave_out_a_mode_that_did_not_run() -> None:
    found = answered()
    tallies = {(t.question, t.mode): t for t in found.tallies()}
    export = tallies[("export", "strict")]
    assert (export.yes, export.tried, export.yes_before, export.tried_before) == (2, 3, 2, 3)
    loose = tallies[("export", "non-strict")]
    assert (loose.yes, loose.tried, loose.yes_before, loose.tried_before) == (3, 3, 1, 2)
    assert (tallies[("saved", "strict")].yes, tallies[("saved", "strict")].tried) == (0, 1)
    # Packages were only made in non-strict mode: strict has no tally, rather than "0 of 0".
    assert ("package", "strict") not in tallies
    assert (tallies[("package", "non-strict")].yes, tallies[("package", "non-strict")].tried) == (0, 1)
    # The pack is the real models only.
    pack = {(t.question, t.mode): t for t in found.tallies(found.pack)}
    assert [c.case for c in found.pack] == ["real_models/llama", "real_models/resnet"]
    assert (pack[("export", "strict")].yes, pack[("export", "strict")].tried) == (2, 2)


def test_pairs_and_the_newest_pair_follow_version_order() -> None:
    found = upgrade.Upgrades(CELLS, LOADS)
    assert found.releases == ("2.5.1", "2.10.0", "2.15.0")
    assert found.pairs() == [("2.5.1", "2.10.0"), ("2.5.1", "2.15.0"), ("2.10.0", "2.15.0")]
    assert upgrade.newest_pair(found.releases) == ("2.10.0", "2.15.0")
    assert upgrade.newest_pair(["2.5.1"]) is None
    # Another pair reads its own rows: 2.10.0's saved program loads on 2.15.0.
    resnet = by_case(found.answer("2.10.0", "2.15.0", ["real_models/resnet"]))["real_models/resnet"]
    assert resnet.verdict == "works"
    assert resnet.modes[0].answer("saved") is Answer.YES


def test_the_markdown_page_answers_the_pack_case_by_case_and_lists_what_else_breaks() -> None:
    from matrix.report import upgrade as page
    from matrix.report.writers import markdown as md_writer

    text = md_writer.write(page.build(answered()))
    pack = text.split("## The real-model pack")[1].split("## Other cases")[0]
    rows = [line for line in pack.splitlines() if line.startswith("| [")]
    # One row per case and mode, each answer in its column.
    assert rows[2].split(" | ")[1:6] == ["breaks", "strict", "pass → pass", "load-error", "–"]
    assert rows[3].split(" | ")[1:7] == ["breaks", "non-strict", "pass → pass", "pass", "load-error", "ok"]
    # Each row that breaks says why: the error's first line.
    assert rows[2].split(" | ")[-1].startswith("saved program broken: RuntimeError: Serialized version")
    # Packages were made in non-strict mode only: the line names that mode alone.
    assert "\n- packages, non-strict: 0 of 1 load and match\n" in pack
    others = text.split("## Other cases the upgrade breaks")[1]
    assert "models/cond" in others and "strict: export" in others and "outputs differ" in others
    assert "models/scan" not in others
    # What the front page's line counts (its line itself: test_report's wrong-results test).
    assert sum(1 for c in answered().cases if c.breaks) == 2 and len(answered().cases) == 4
    assert md_writer.write(page.build(None)).endswith("Fewer than two builds: no upgrade to answer.\n")


def test_the_site_offers_every_pair_or_within_its_budget_those_to_the_newest_and_consecutive_ones(monkeypatch) -> None:
    from matrix.report.site import upgrade as site

    found = upgrade.Upgrades(CELLS, LOADS)
    data = site.data(found, {})
    assert sorted(data["pairs"]) == ["2.10.0..2.15.0", "2.5.1..2.10.0", "2.5.1..2.15.0"] and data["every_pair"]
    # Each pair's row: per case a verdict, then per mode the saved program's, package's and compile's status.
    cases = data["cases"]
    row = data["pairs"]["2.5.1..2.15.0"]["rows"]
    width = 1 + 3 * len(data["modes"])
    resnet = row[cases.index("real_models/resnet") * width :][:width]
    assert data["verdicts"][site._ALPHABET.index(resnet[0])] == "breaks"
    assert data["codes"][resnet[1]][2] == "load-error" and data["codes"][resnet[4]][2] == "pass"
    monkeypatch.setattr(site, "PAIR_BUDGET", 4)
    assert site.offered(found) == [("2.5.1", "2.10.0"), ("2.5.1", "2.15.0"), ("2.10.0", "2.15.0")]
    more = upgrade.Upgrades(pd.concat([CELLS, frame([cell("2.12.0", "models/cond", "strict", "pass")])]))
    assert site.offered(more) == [
        ("2.5.1", "2.10.0"), ("2.5.1", "2.15.0"), ("2.10.0", "2.12.0"), ("2.10.0", "2.15.0"), ("2.12.0", "2.15.0"),
    ]  # fmt: skip
    assert not site.data(more, {})["every_pair"]


# --- the answer true row by row --------------------------------------------------------------------------------


def test_a_verdict_is_judged_per_mode_and_the_case_verdict_summarises_its_modes() -> None:
    from matrix.report import upgrade as page
    from matrix.report.writers import markdown as markdown_writer

    cells = frame([
        cell("2.14.1", "real_models/vit", "strict", "fail", "Unsupported: dynamic img size"),
        cell("2.15.0", "real_models/vit", "strict", "fail", "Unsupported: dynamic img size"),
        cell("2.14.1", "real_models/vit", "non-strict", "pass"),
        cell("2.15.0", "real_models/vit", "non-strict", "pass"),
    ])  # fmt: skip
    (vit,) = upgrade.Upgrades(cells).answer("2.14.1", "2.15.0").cases
    strict, loose = vit.modes
    # fail → fail is no "works", whatever the other mode does.
    assert (strict.verdict, loose.verdict) == ("fails", "works")
    assert vit.verdict == "works" and vit.by_verdict == (("works", ("non-strict",)), ("fails", ("strict",)))
    assert page.case_words(vit) == "works in non-strict; fails on both in strict"
    page_text = markdown_writer.write(page.build(upgrade.Upgrade("2.14.1", "2.15.0", (vit,))))
    rows = [line.split(" | ")[1:4] for line in page_text.splitlines() if line.startswith("| [real_models/vit]")]
    # Each row prints its own mode's verdict.
    assert rows == [["fails on both", "strict", "fail → fail"], ["works", "non-strict", "pass → pass"]]


def test_a_product_is_broken_only_where_it_worked_on_the_older_build_with_its_own_files() -> None:
    cells = frame([cell(r, "m", mode, "pass") for r in ("2.4.1", "2.5.1", "2.15.0") for mode in MODES])
    loads = frame([
        # strict: never loaded on 2.4.1 or 2.5.1 themselves, nor on 2.15.0: it fails on both, since 2.4.1.
        used("2.4.1", "2.4.1", "m", "strict", "load-error", "AttributeError: no codecache"),
        used("2.5.1", "2.5.1", "m", "strict", "load-error", "AttributeError: no codecache"),
        used("2.5.1", "2.15.0", "m", "strict", "load-error", "AttributeError: no codecache"),
        # non-strict: no record of its load on 2.5.1: it fails on B, and nothing says the upgrade broke it.
        used("2.5.1", "2.15.0", "m", "non-strict", "load-error", "AttributeError: no codecache"),
    ])  # fmt: skip
    (m,) = upgrade.Upgrades(cells, loads).answer("2.5.1", "2.15.0").cases
    strict, loose = m.modes
    assert m.breaks == () and (strict.verdict, loose.verdict) == ("fails", "fails on B")
    saved = strict.outcome("saved")
    assert saved is not None and (saved.change, saved.since) == ("still fails", "2.4.1")
    # The same load, having worked on 2.5.1 with its own files, is broken by the upgrade.
    home = frame([used("2.5.1", "2.5.1", "m", "non-strict", "pass")])
    (m,) = upgrade.Upgrades(cells, pd.concat([loads, home])).answer("2.5.1", "2.15.0").cases
    assert m.breaks == (("non-strict", "saved"),) and m.modes[1].verdict == "breaks"


def test_a_compile_is_broken_only_where_the_older_build_compiled_its_own_program() -> None:
    cells = frame([
        {**cell("2.5.1", "m", "non-strict", "pass"), "aoti_status": "ok"},
        {**cell("2.5.1", "n", "non-strict", "pass"), "aoti_status": "error"},
        cell("2.15.0", "m", "non-strict", "pass"),
        cell("2.15.0", "n", "non-strict", "pass"),
    ])  # fmt: skip
    compiles = frame([used("2.5.1", "2.15.0", c, "non-strict", "error", "CppCompileError: boom") for c in "mn"])
    found = by_case(upgrade.Upgrades(cells, compiles=compiles).answer("2.5.1", "2.15.0"))
    assert found["m"].breaks == (("non-strict", "compile"),)
    assert found["n"].breaks == () and found["n"].modes[0].verdict == "fails"


def test_a_stage_failure_shows_as_what_it_is() -> None:
    from matrix.report import upgrade as page

    def staged(release: str, case: str, outcome: str) -> Dict[str, Any]:
        error = "ValueError: Cannot view a tensor" if outcome == "error" else None
        return {**cell(release, case, "strict", "pass"), "decompose_status": outcome, "decompose_error": error,
                "serialize_status": "ok"}  # fmt: skip

    cells = frame([staged("2.14.1", "gpt2", "error"), staged("2.15.0", "gpt2", "error"),
                   staged("2.14.1", "swin", "ok"), staged("2.15.0", "swin", "error")])  # fmt: skip
    found = by_case(upgrade.Upgrades(cells).answer("2.14.1", "2.15.0"))
    gpt2, swin = found["gpt2"].modes[0], found["swin"].modes[0]
    assert page.export_words(gpt2) == "pass, decomposition error → pass, decomposition error"
    assert gpt2.verdict == "fails" and found["gpt2"].breaks == ()
    assert swin.verdict == "breaks" and found["swin"].breaks == (("strict", "decomposition"),)
    assert page.export_words(swin) == "pass → pass, decomposition error"
    assert "decomposition broken: ValueError: Cannot view a tensor" in page.note_words(swin)


def test_a_row_that_breaks_carries_its_error_and_the_known_issue_it_matches() -> None:
    from matrix.records.known_issues import KnownIssue
    from matrix.report import upgrade as page

    issue = KnownIssue("codecache", "cannot load packages", "https://github.com/pytorch/pytorch/issues/173706",
                       ("aoti",), "AttributeError", "no attribute 'codecache'", ("2.10",))  # fmt: skip
    cells = frame([cell(r, "m", "non-strict", "pass") for r in ("2.9.1", "2.10.0")])
    packages = frame([
        used("2.9.1", "2.9.1", "m", "non-strict", "pass"),
        {**used("2.9.1", "2.10.0", "m", "non-strict", "load-error"), "error_type": "AttributeError",
         "error_message": "module 'torch._inductor' has no attribute 'codecache'\ntraceback"},
    ])  # fmt: skip
    (m,) = upgrade.Upgrades(cells, packages=packages, issues=[issue]).answer("2.9.1", "2.10.0").cases
    (mode,) = m.modes
    package = mode.outcome("package")
    assert package is not None and package.issue == issue
    assert package.error == "AttributeError: module 'torch._inductor' has no attribute 'codecache'"
    assert page.note_words(mode) == (
        "AOTInductor package broken: AttributeError: module 'torch._inductor' has no attribute 'codecache'"
        " (known upstream issue pytorch/pytorch#173706)"
    )
    assert page.first_error(m).endswith("(known upstream issue pytorch/pytorch#173706)")


def test_the_library_versions_that_differ_between_the_builds_are_on_the_row() -> None:
    from matrix.report import upgrade as page

    def with_versions(release: str, transformers: str) -> Dict[str, Any]:
        added = {"transformers": transformers, "tokenizers": "0.23.3"}
        return {**cell(release, "bert", "strict", "pass"), "dependency_set": "transformers", "added_packages": added}

    published = {**with_versions("2.15.0", "5.23.0"), "added_packages": '{"transformers": "5.23.0"}'}
    for after in (with_versions("2.15.0", "5.23.0"), published):  # a published table keeps them as JSON text
        (bert,) = upgrade.Upgrades(frame([with_versions("2.5.1", "5.18.0"), after])).answer("2.5.1", "2.15.0").cases
        assert bert.modes[0].versions == (("transformers", "5.18.0", "5.23.0"),)
        assert page.note_words(bert.modes[0]) == "transformers 5.18.0 → 5.23.0"
    (same,) = (
        upgrade.Upgrades(frame([with_versions("2.5.1", "5.18.0"), with_versions("2.15.0", "5.18.0")]))
        .answer("2.5.1", "2.15.0")
        .cases
    )
    assert same.modes[0].versions == ()


def test_the_front_pages_two_verdicts_name_the_same_cells_or_say_why_not() -> None:
    from matrix.report import upgrade as page

    cells = frame([
        # Regressed in 2.15.0 and broken by the upgrade: both name it.
        cell("2.14.1", "both", "strict", "pass"), cell("2.15.0", "both", "strict", "fail", "boom"),
        # Regressed in 2.15.0 (from 2.14.1), but failing on 2.5.1 too: the upgrade from 2.5.1 breaks nothing.
        cell("2.5.1", "old", "strict", "fail", "boom"), cell("2.14.1", "old", "strict", "pass"),
        cell("2.15.0", "old", "strict", "fail", "boom"),
        # A saved program that loaded on 2.14.1 and does not on 2.15.0: no transition judges it.
        cell("2.14.1", "saved", "strict", "pass"), cell("2.15.0", "saved", "strict", "pass"),
    ])  # fmt: skip
    loads = frame([used("2.14.1", "2.14.1", "saved", "strict", "pass"),
                   used("2.14.1", "2.15.0", "saved", "strict", "load-error", "boom")])  # fmt: skip
    upgrades = upgrade.Upgrades(cells, loads)
    regressed = [("both", "strict"), ("old", "strict")]
    newest = upgrade.agreement(upgrades.answer("2.14.1", "2.15.0"), regressed, "2.14.1")
    assert [(d.case, d.said_by) for d in newest] == [("saved", "upgrade")]
    assert "a product made on 2.14.1" in newest[0].why and newest[0].what == "saved"
    older = upgrade.agreement(upgrades.answer("2.5.1", "2.15.0"), regressed, "2.14.1")
    assert [(d.case, d.said_by, d.why, d.what) for d in older] == [
        ("both", "regressed", "not tried on 2.5.1", ""),  # no cell of it on 2.5.1
        ("old", "regressed", "failing on 2.5.1 already", "export, since 2.5.1"),
    ]
    # The front page's upgrade line (one document, both forms) says each reason once, then the cells it holds for.
    said = page.apart_words(upgrades.answer("2.14.1", "2.15.0"), newest)
    assert said == (
        ". Not among the cells that regressed in 2.15.0: what broke is a product made on 2.14.1, which the"
        " regressions do not judge: saved strict (saved)"
    )
    many = [upgrade.Disagreement("c%d" % i, "strict", "upgrade", "why", "saved") for i in range(5)]
    many.append(upgrade.Disagreement("o", "strict", "regressed", "other", ""))
    assert page.apart_words(upgrades.answer("2.14.1", "2.15.0"), many) == (
        ". Not among the cells that regressed in 2.15.0: why: c0 strict (saved), c1 strict (saved), c2 strict"
        " (saved) and 2 more; other: o strict"
    )
    assert page.apart_words(upgrades.answer("2.14.1", "2.15.0"), ()) == ""


def test_a_declared_stage_that_passed_on_the_older_build_and_fails_on_the_newer_breaks() -> None:
    from matrix.report import upgrade as page

    def onnx(release: str, case: str, outcome: str, **details: Any) -> Dict[str, Any]:
        return {**cell(release, case, "non-strict", "pass"), "onnx_status": outcome, **details}

    failed = dict(onnx_step="export", onnx_error_type="torch.onnx.OnnxExporterError", onnx_error="no function")
    cells = frame([
        onnx("2.9.1", "breaks", "pass"), onnx("2.10.0", "breaks", "fail", **failed),
        # Not applicable (no exporter, or no onnxruntime) is never a failure, on either side.
        onnx("2.9.1", "lacks", "pass"), onnx("2.10.0", "lacks", "not-applicable", onnx_error="no onnxruntime"),
        onnx("2.9.1", "arrives", "not-applicable"), onnx("2.10.0", "arrives", "fail", **failed),
    ])  # fmt: skip
    found = by_case(upgrade.Upgrades(cells).answer("2.9.1", "2.10.0"))
    (breaks,) = found["breaks"].modes
    assert found["breaks"].breaks == (("non-strict", "ONNX"),) and breaks.verdict == "breaks"
    assert page.export_words(breaks) == "pass → pass, ONNX fail"
    assert page.note_words(breaks) == "ONNX broken: export: torch.onnx.OnnxExporterError: no function"
    assert found["lacks"].breaks == () and found["lacks"].modes[0].verdict == "works"
    outcome = found["lacks"].modes[0].outcome("ONNX")
    assert outcome is not None and outcome.change == "not tried"
    assert found["arrives"].breaks == () and found["arrives"].modes[0].verdict == "fails on B"
