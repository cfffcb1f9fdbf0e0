"""``export-matrix check``: rows from records, the tables, the summary and input errors, with fake probes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from matrix import check_table
from matrix.check_table import Row
from matrix.commands import check, probe
from matrix.commands.check import CheckError
from matrix.commands.probe import Probed
from matrix.contract import records, schema
from matrix.contract.case import CaseInfo
from matrix.contract.requests import RunRequest
from matrix.contract.schema import NoCell, Status
from matrix.envs import releases

from conftest import FIXTURES, make_cell


def cell(mode: str, status: str, **values: Any) -> Dict[str, Any]:
    fields: Dict[str, Any] = dict(torch_version="2.5.1", variant="pypi", python="3.11", case="add_one", run=0)
    fields.update(values)
    return records.empty_cell(mode=mode, status=status, **fields)


def env_error(message: str) -> Dict[str, Any]:
    return {
        "kind": "env-error", "schema_version": 1, "torch_version": "2.1.2", "variant": "pypi", "python": "3.12",
        "error_type": "matrix.envs.install.BuildUnavailable", "error_message": message,
    }  # fmt: skip


def test_rows_show_each_modes_cell() -> None:
    probed = Probed(
        cells={
            "strict": cell("strict", "pass", graph_hash="0123456789abcdef", export_s=0.25),
            "non-strict": cell("non-strict", "mismatch", error_type="AssertionError", error_message="outputs differ"),
        }
    )
    rows = check.rows_for(probed, ["strict", "non-strict"], "2.5.1")
    assert rows == [
        Row("2.5.1", "pypi", "3.11", "strict", Status.PASS, "0123456789abcdef", 0.25, None),
        Row("2.5.1", "pypi", "3.11", "non-strict", Status.MISMATCH, None, None, "AssertionError: outputs differ"),
    ]


def test_an_env_error_fills_every_mode_and_a_missing_cell_is_no_record_with_the_workers_problem() -> None:
    probed = Probed(env_error=env_error("torch 2.1.2 has no wheels for Python 3.12"))
    rows = check.rows_for(probed, ["strict", "non-strict"], "2.1.2")
    assert [(r.torch, r.python, r.mode, r.status, r.error) for r in rows] == [
        ("2.1.2", "3.12", "strict", NoCell.ENV_ERROR, "torch 2.1.2 has no wheels for Python 3.12"),
        ("2.1.2", "3.12", "non-strict", NoCell.ENV_ERROR, "torch 2.1.2 has no wheels for Python 3.12"),
    ]
    assert check.rows_for(Probed(), ["strict"], "2.4.1") == [Row("2.4.1", "", "", "strict", NoCell.NO_RECORD)]
    broken = Probed(cells={"strict": cell("strict", "pass")}, problem="export-matrix run exited with 1: boom")
    rows = check.rows_for(broken, ["strict", "non-strict"], "2.5.1")
    assert [(r.status, r.error) for r in rows] == [
        (Status.PASS, None),
        (NoCell.NO_RECORD, "export-matrix run exited with 1: boom"),
    ]


def write_records(folder: Path, name: str, found: Sequence[Dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / name, "a", encoding="utf-8") as f:
        f.writelines(json.dumps(record) + "\n" for record in found)


def test_check_shows_the_record_that_schema_recency_says_wins_not_the_last_one_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Two cells of one identity per mode, the winner read first: the later instant (an offset
    # that sorts first as text) in strict, the canonical tie-break at equal times in non-strict.
    later = make_cell("2.5.1", "add_one", "pass", "strict", finished_at="2025-01-01T11:00:00Z")
    earlier = make_cell("2.5.1", "add_one", "fail", "strict", finished_at="2025-01-01T12:00:00+02:00")
    tied = [
        make_cell("2.5.1", "add_one", status, "non-strict", finished_at="2025-01-01T10:00:00+00:00")
        for status in ("crash", "timeout")
    ]
    tied.sort(key=schema.recency, reverse=True)
    expected = {"strict": max([later, earlier], key=schema.recency), "non-strict": max(tied, key=schema.recency)}
    assert expected["strict"] is later and expected["non-strict"] is tied[0]  # neither is the last read

    def fake_run(command: Any, env: Any, request: RunRequest, *rest: Any) -> Optional[str]:
        write_records(Path(request.out), "torch-2.5.1_cpu_py3.11.jsonl", [later, earlier, *tied])
        return None

    monkeypatch.setattr(probe, "run_case", fake_run)
    info = probe.validate_case(str(FIXTURES / "basic" / "add_one.py"))
    options = check.CheckOptions(case=info.path, timeout=1.0)
    rows = check.check_target(check.Target(None), [info], options, tmp_path)[info.name]
    assert [(r.mode, r.status) for r in rows] == [(mode, expected[mode]["status"]) for mode in ("strict", "non-strict")]


def test_long_errors_are_cut_to_one_readable_line() -> None:
    text = check_table.short_error("torch._dynamo.exc.UserError", "x" * 200)
    assert text is not None and text.startswith("UserError: xxx") and len(text) == check_table.ERROR_WIDTH
    assert check_table.short_error(None, None) is None


ROWS = [
    Row("2.5.1", "pypi", "3.11", "strict", "pass", "0123456789abcdef", 0.25, None),
    Row("2.13.0+cpu", "cpu", "3.11", "non-strict", "fail", None, 1.5, "Unsupported: data-dependent branch"),
]


def test_text_and_markdown_tables() -> None:
    text = check_table.format_rows(ROWS, "text").splitlines()
    assert text[0].split() == ["torch", "variant", "python", "mode", "status", "graph", "hash", "export", "s", "error"]
    assert text[2].split() == ["2.5.1", "pypi", "3.11", "strict", "pass", "0123456789abcdef", "0.25"]
    assert text[3].split()[:7] == ["2.13.0+cpu", "cpu", "3.11", "non-strict", "fail", "1.50", "Unsupported:"]
    markdown = check_table.format_rows(ROWS, "markdown").splitlines()
    assert markdown[0].startswith("| torch ") and markdown[1].startswith("|--")
    assert "| 2.5.1 " in markdown[2]


def test_json_rows_round_trip() -> None:
    assert [Row(**r) for r in json.loads(check_table.format_rows(ROWS, "json"))] == ROWS


def test_targets_resolve_words_in_order() -> None:
    chosen = check.targets(["2.5", "current", "2.13.0+cpu", "2.5.1"], None, "3.11")
    assert [t.label for t in chosen] == ["2.5.1", "current", "2.13.0+cpu"]
    assert [t.label for t in check.targets(["2.4"], "cpu", "3.11")] == ["2.4.1+cpu"]
    with pytest.raises(CheckError, match="--torch 2.99: unknown torch minor series 2.99"):
        check.targets(["2.99"], None, None)


def case_info(name: str) -> CaseInfo:
    return CaseInfo(name, "%s.py" % name, "a user's model")


def rows_of(*statuses: str) -> List[Row]:
    """One release per argument (oldest first), both modes with the given status."""
    return [
        Row("2.%d.0" % minor, "pypi", "3.11", mode, status)
        for minor, status in enumerate(statuses, 1)
        for mode in ("strict", "non-strict")
    ]


def test_passing_summary_names_where_a_failing_case_passes_and_from_when_it_keeps_passing() -> None:
    assert check_table.passing_summary(rows_of("pass", "pass")) is None  # nothing to explain
    assert check_table.passing_summary(rows_of("fail", "pass", "fail", "pass", "pass")) == (
        "passes on 2.2.0, 2.4.0, 2.5.0; keeps passing from 2.4.0 on"
    )
    assert (
        check_table.passing_summary(rows_of("pass", "fail"))
        == "passes on 2.1.0; fails on the newest release checked (2.2.0)"
    )
    assert (
        check_table.passing_summary(rows_of("fail", "crash")) == "passes on none of the releases checked (2.1.0, 2.2.0)"
    )
    mixed = rows_of("pass", "pass")
    mixed[3] = Row("2.2.0", "pypi", "3.11", "non-strict", "fail")  # one mode failing is not a pass
    assert check_table.passing_summary(mixed) == "passes on 2.1.0; fails on the newest release checked (2.2.0)"
    # A mode the release lacks (2.1.0 has no non-strict) does not count against it: it passes in every mode it has.
    lacking = rows_of("pass", "pass")
    lacking[1] = Row("2.1.0", "pypi", "3.11", "non-strict", "not-applicable")
    assert check_table.passing_summary(lacking) is None
    lacking[3] = Row("2.2.0", "pypi", "3.11", "non-strict", "fail")
    assert check_table.passing_summary(lacking) == "passes on 2.1.0; fails on the newest release checked (2.2.0)"
    # A release that could run neither mode does not pass.
    nothing = rows_of("pass", "pass")
    nothing[:2] = [Row("2.1.0", "pypi", "3.11", m, "not-applicable") for m in ("strict", "non-strict")]
    assert check_table.passing_summary(nothing) == "passes on 2.2.0; keeps passing from 2.2.0 on"


def test_parallel_check_prints_the_table_of_a_serial_one(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import time

    labels = ["2.1.2", "2.5.1", "2.9.1", "2.15.0"]
    monkeypatch.setattr(
        check,
        "targets",
        lambda words, variant, python: (
            [check.Target(releases.default_matrix().resolve(label), "3.11") for label in labels]
        ),
    )

    def fake(target, infos, options, out, jobs):
        modes = check.modes_of(options.mode)
        time.sleep(0.05 * (len(labels) - labels.index(target.label)))  # the oldest finishes last
        status = "pass" if target.label != "2.1.2" else "fail"
        return {info.name: [Row(target.label, "pypi", "3.11", mode, status) for mode in modes] for info in infos}

    monkeypatch.setattr(check, "check_target", fake)
    tables = []
    for jobs in (1, 4):
        options = check.CheckOptions(case=str(FIXTURES / "basic" / "add_one.py"), jobs=jobs)
        assert check.main(options) == 0
        captured = capsys.readouterr()
        tables.append(captured.out)
    assert tables[0] == tables[1]
    assert [line.split()[0] for line in tables[0].splitlines()[2:10]] == [label for label in labels for _ in (0, 1)]
    assert "keeps passing from 2.5.1 on\n" in tables[0]
    # The table ends with the report's upgrade answer, from the oldest release checked to the newest.
    answer = (
        "upgrade 2.1.2 → 2.15.0:\n  add_one: fixed\n"
        "  export, strict: 1 of 1 pass (0 of 1 on the older build); export, non-strict: 1 of 1 pass (0 of 1 on the"
        " older build)"
    )
    assert tables[0].rstrip().endswith(answer)


def test_the_upgrade_answer_names_what_breaks_and_is_absent_for_one_release() -> None:
    checked = [
        (case_info("tiny_mlp"), rows_of("pass", "fail")),
        (case_info("pooled_conv"), rows_of("pass", "pass")),
    ]
    assert check_table.upgrade_summary(checked) == (
        "upgrade 2.1.0 → 2.2.0:\n  pooled_conv: works\n  tiny_mlp: breaks (strict: export; non-strict: export)\n"
        "  export, strict: 1 of 2 pass (2 of 2 on the older build); export, non-strict: 1 of 2 pass (2 of 2 on the"
        " older build)"
    )  # check uses no product on another release: no line says a product was "not run for this pair"
    assert check_table.upgrade_summary([(case_info("tiny_mlp"), rows_of("pass"))]) is None
    listed = check_table.upgrade_summary(checked, "markdown")
    assert listed is not None and listed.splitlines()[:3] == [
        "upgrade 2.1.0 → 2.2.0:", "- pooled_conv: works", "- tiny_mlp: breaks (strict: export; non-strict: export)"
    ]  # fmt: skip


def test_a_failed_rows_diagnosis_is_listed_under_the_table_and_kept_whole_in_json() -> None:
    problems = [
        {"kind": "data-dependent-error", "message": "cannot decide u0 > 2", "frame": "m.py:9 in forward", "count": 2},
        {"kind": "data-dependent-error", "message": "cannot decide u1 < 0", "frame": None, "count": 1},
        {"kind": "missing-fake-kernel", "message": "operator mylib.f", "frame": None, "count": 1},
    ]
    found = cell("strict", "fail", error_type="UserError", error_message="x", diagnosis=problems)
    (row,) = check.rows_for(Probed(cells={"strict": found}), ["strict"], "2.9.1")
    text = check_table.format_rows([row], "text").splitlines()
    assert text[-3:] == [
        "draft_export on 2.5.1 strict:",
        "  data-dependent-error ×3: cannot decide u0 > 2 at m.py:9 in forward (and 1 more)",
        "  missing-fake-kernel ×1: operator mylib.f",
    ]
    assert json.loads(check_table.format_rows([row], "json"))[0]["diagnosis"] == problems


def test_current_without_torch_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(CheckError, match="--torch current: this interpreter .* has no torch"):
        check.targets(["current"], None, None)


def status_column(table: str, rows: int) -> List[str]:
    """The status column of the first ``rows`` rows of a plain-text table, cut where its rule of dashes says."""
    lines = table.splitlines()
    header, rule = lines[0], lines[1]
    start = header.index("status")
    end = rule.index(" ", start)
    return [line[start:end].strip() for line in lines[2 : 2 + rows]]


def test_every_status_check_prints_is_a_schema_value(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    # One release per cell status, one whose environment does not install, one whose worker fails.
    labels = ["2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0"]
    outcomes = {label: Probed(cells={m: cell(m, s.value) for m in schema.MODES}) for label, s in zip(labels, Status)}
    outcomes[labels[-2]] = Probed(env_error=env_error("no wheels"))
    outcomes[labels[-1]] = Probed(problem="the worker did not finish in time")
    assert len(outcomes) == len(Status) + 2
    chosen = [check.Target(releases.default_matrix().resolve(label), "3.11") for label in labels]
    monkeypatch.setattr(check, "targets", lambda words, variant, python: chosen)
    monkeypatch.setattr(
        check, "probe_cases", lambda spec, infos, *rest: {i.name: outcomes[spec.build.torch_version] for i in infos}
    )
    known = set(schema.STATUSES) | {value.value for value in NoCell}
    for fmt in ("text", "json"):
        assert check.main(check.CheckOptions(case=str(FIXTURES / "basic" / "add_one.py"), format=fmt, jobs=1)) == 0
        captured = capsys.readouterr()
        progress = [line.split()[-1] for line in captured.err.splitlines() if line.startswith("  ")]
        rows = 2 * len(labels)  # one per release and mode
        table = (
            [row["status"] for row in json.loads(captured.out)] if fmt == "json" else status_column(captured.out, rows)
        )
        for shown in (progress, table):
            assert len(shown) == rows
            assert set(shown) == known  # schema values only, and every one of them appears


def test_a_record_status_the_schema_does_not_know_is_refused_in_one_line() -> None:
    odd = Probed(cells={"strict": cell("strict", "flaky")})
    with pytest.raises(CheckError, match="status 'flaky', which this torch-export-matrix does not know"):
        check.rows_for(odd, ["strict"], "2.5.1")
    with pytest.raises(ValueError):
        Row("2.5.1", "pypi", "3.11", "strict", "error")


def test_the_versions_under_the_table_name_each_package_once() -> None:
    added = {"transformers": "5.23.0", "tokenizers": "0.22.1"}
    probed = probe.Probed(cells={"strict": make_cell("2.5.1", "my_bert")}, environment={"added_packages": added})
    (row,) = check.rows_for(probed, ["strict"], "2.5.1", ["transformers", "transformers==5.23.0"])
    assert row.packages == "transformers 5.23.0"  # the case's bare name and a --with pin of the same library
    assert check_table.package_lines([row]) == ["with torch 2.5.1: transformers 5.23.0"]


def test_a_nightly_among_the_releases_checked_is_judged_against_the_newest_release():
    from matrix.records import candidate

    rows = [
        check.Row("2.15.0+cpu", "cpu", "3.11", "strict", "pass", graph_hash="aaaa"),
        check.Row("2.16.0.dev20260115+cpu", "nightly-cpu", "3.11", "strict", "fail", error="RuntimeError: new"),
        check.Row("2.16.0.dev20260115+cpu", "nightly-cpu", "3.11", "non-strict", "env-error"),
    ]
    table = check_table.cell_table(rows, "m")
    (found,) = candidate.judge(table)
    assert (
        check_table.candidate_summary(found)
        == "candidate 2.16.0.dev20260115+cpu (nightly-cpu) vs 2.15.0+cpu (cpu): regresses (strict: pass → fail)"
    )
    assert candidate.should_fail("regression", candidate.failing(table), (found,)) is not None
    # No cell of a release to compare with: nothing judged, whatever the candidate did.
    assert candidate.judge(check_table.cell_table(rows[1:], "m")) == ()


# --- several cases: files and folders ---------------------------------------------------------------

USER_MODELS = Path(__file__).resolve().parent.parent / "data" / "user_models"
NIGHTLY = ("2.16.0.dev20260115+cpu", "nightly-cpu")


def test_a_folder_stands_for_its_case_files_and_leaves_helpers_out() -> None:
    found = check.case_files([str(USER_MODELS)])
    assert [info.name for info in found] == ["positive_sum", "pooled_conv", "tiny_mlp"]  # not _blocks, a helper
    assert found[2].dependencies == ("numpy",)  # its PEP 723 block
    # A file named again, on its own or through its folder, is one case.
    again = check.case_files([str(USER_MODELS / "models" / "tiny_mlp.py"), str(USER_MODELS / "models")])
    assert [info.name for info in again] == ["tiny_mlp", "pooled_conv"]


def test_paths_that_name_no_case_or_one_name_twice_are_refused_before_anything_runs(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text((USER_MODELS / "models" / "pooled_conv.py").read_text())
    with pytest.raises(CheckError, match="two case files named m; check them in separate commands"):
        check.case_files([str(tmp_path / "a"), str(tmp_path / "b")])
    (tmp_path / "empty" / "_private").mkdir(parents=True)
    (tmp_path / "empty" / "_private" / "m.py").write_text("")
    with pytest.raises(CheckError, match="empty: a folder with no case file"):
        check.case_files([str(tmp_path / "empty")])
    (tmp_path / "a" / "helper.py").write_text("x = 1\n")  # no docstring, no model: not a case
    with pytest.raises(probe.CaseFileError, match="helper.py: the module needs a docstring"):
        check.case_files([str(tmp_path / "a")])
    with pytest.raises(CheckError, match="name a case file"):
        check.CheckOptions()


def fake_checks(monkeypatch: pytest.MonkeyPatch, broken: Dict[str, str]) -> List[Any]:
    """Two targets, 2.15.0 and a nightly; a case fails where ``broken`` names its build ("all" or "nightly")."""
    chosen = [check.Target(releases.default_matrix().resolve(label), "3.11") for label in ("2.14.0", "2.15.0")]
    monkeypatch.setattr(check, "targets", lambda words, variant, python: chosen)
    calls: List[Any] = []

    def fake(target, infos, options, out, jobs):
        modes = check.modes_of(options.mode)
        calls.append((tuple(info.name for info in infos), target.label, target.dependency_set, options.reinstall))
        torch, variant = ("2.15.0", "pypi") if target.label == "2.14.0" else NIGHTLY
        rows = {}
        for info in infos:
            fails = broken.get(info.name) == "all" or (broken.get(info.name) == "nightly" and variant == NIGHTLY[1])
            rows[info.name] = [Row(torch, variant, "3.11", mode, "fail" if fails else "pass") for mode in modes]
        return rows

    monkeypatch.setattr(check, "check_target", fake)
    return calls


@pytest.mark.parametrize(
    "broken, fail_on, code",
    [
        ({}, "regression", 0),
        ({"positive_sum": "all"}, "regression", 0),  # fails on the release too: not the candidate's doing
        ({"positive_sum": "all"}, "failing", 1),
        ({"positive_sum": "all"}, "never", 0),
        ({"tiny_mlp": "nightly"}, "regression", 1),
    ],
)
def test_several_cases_get_a_table_each_and_one_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys, broken: Dict[str, str], fail_on: str, code: int
) -> None:
    fake_checks(monkeypatch, broken)
    options = check.CheckOptions(cases=(str(USER_MODELS),), format="markdown", fail_on=fail_on, jobs=1)
    assert check.main(options) == code
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("### ")] == [
        "### positive_sum", "### pooled_conv", "### tiny_mlp"
    ]  # fmt: skip
    assert out.count("| torch ") == 3
    failing = sorted(broken)
    summary = "3 cases: %d pass on every release checked" % (3 - len(failing))
    assert summary + ("; 1 does not: %s" % failing[0] if failing else "") in out
    if broken.get("tiny_mlp") == "nightly":
        (line,) = [line for line in out.splitlines() if line.startswith("candidate ") and "tiny_mlp" in line]
        assert line.startswith("candidate %s (%s) vs 2.15.0 (" % NIGHTLY[:2]) and ": regresses (" in line
        assert "tiny_mlp strict: pass → fail" in line and "tiny_mlp non-strict: pass → fail" in line
        # The gate failed: it offers the search for the nightly that broke each cell, on the candidate's day.
        bisect = "export-matrix bisect %s --good 2.15.0 --bad nightly:2026-01-15 --mode %%s --variant cpu" % (
            USER_MODELS / "models" / "tiny_mlp.py"
        )
        offer = "#### The nightly that broke it\n\n```sh\n%s\n%s\n```" % (bisect % "non-strict", bisect % "strict")
        assert offer in out
    else:
        assert "The nightly that broke it" not in out


def test_one_case_prints_its_table_alone(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    fake_checks(monkeypatch, {})
    assert check.main(check.CheckOptions(case=str(USER_MODELS / "models" / "pooled_conv.py"), jobs=1)) == 0
    out = capsys.readouterr().out
    assert out.startswith("torch ") and "==" not in out and "cases:" not in out
    options = check.CheckOptions(cases=(str(USER_MODELS / "models"),), format="json", jobs=1)
    assert check.main(options) == 0
    by_case = json.loads(capsys.readouterr().out)
    assert sorted(by_case) == ["pooled_conv", "tiny_mlp"] and all(len(rows) == 4 for rows in by_case.values())


def test_one_worker_per_release_and_dependency_set_runs_all_its_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_checks(monkeypatch, {})
    assert check.main(check.CheckOptions(cases=(str(USER_MODELS),), reinstall=True, jobs=1)) == 0
    # positive_sum and pooled_conv share the releases' own environments; tiny_mlp's PEP 723 block has its own.
    # Each environment is asked for once, so --reinstall rebuilds each once.
    assert calls == [
        (("positive_sum", "pooled_conv"), label, dependency_set, True) if not dependency_set else
        (("tiny_mlp",), label, dependency_set, True)
        for label in ("2.14.0", "2.15.0")
        for dependency_set in ("", "numpy")
    ]  # fmt: skip


def test_the_running_interpreter_runs_every_case_in_one_worker(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    calls = fake_checks(monkeypatch, {})
    monkeypatch.setattr(check, "targets", lambda words, variant, python: [check.Target(None)])
    assert check.main(check.CheckOptions(cases=(str(USER_MODELS),), torch=("current",), jobs=1)) == 0
    assert calls == [(("positive_sum", "pooled_conv", "tiny_mlp"), "current", "", False)]
    progress = [line.split() for line in capsys.readouterr().err.splitlines() if line.startswith("  ")]
    # Each row as it arrives, named by its case: several cases share the release's lines.
    assert [words[1:3] for words in progress[:2]] == [["positive_sum", "strict"], ["positive_sum", "non-strict"]]


def test_two_builds_of_one_version_are_named_apart_in_the_summary():
    rows = [
        Row("2.13.0+cpu", "cpu", "3.11", "strict", "pass"),
        Row("2.13.0+cpu", "test-cpu", "3.11", "strict", "fail", error="RuntimeError: boom"),
    ]
    assert check_table.passing_summary(rows) == (
        "passes on 2.13.0+cpu (cpu); fails on the newest release checked (2.13.0+cpu (test-cpu))"
    )
