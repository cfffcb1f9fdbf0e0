"""Known upstream issues: the data file, its validation, and the labels it puts on failures of hand-written tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pandas as pd
import pytest

from matrix.records import failures, known_issues
from matrix.records.known_issues import KnownIssue, KnownIssueError
from matrix.report import document as d
from matrix.report import known_issues as report_known
from matrix.report.writers import markdown as markdown_writer

CODECACHE = KnownIssue(
    id="codecache",
    summary="cannot load packages",
    link="https://github.com/pytorch/pytorch/issues/173706",
    stages=("aoti",),
    error_type="AttributeError",
    message=r"has no attribute 'codecache'",
    releases=("2.10",),
)
INCLUDE = KnownIssue(
    id="include",
    summary="absolute include",
    link="",
    stages=("aoti",),
    error_type="torch._inductor.exc.CppCompileError",
    message=r"C\+\+ compile error",
    releases=("2.5",),
    made_on=("2.5",),
)
SAVE = KnownIssue(
    id="save",
    summary="a save/load bug",
    link="https://github.com/pytorch/pytorch/issues/1",
    stages=("save/load",),
    error_type="TypeError",
    message=r"unexpected keyword",
    releases=("2.4.1",),
)
ISSUES = (CODECACHE, INCLUDE, SAVE)
CODECACHE_MESSAGE = "module 'torch._inductor' has no attribute 'codecache'"


def entry(**changes: Any) -> Dict[str, Any]:
    base = {
        "id": "x",
        "summary": "s",
        "link": "https://github.com/pytorch/pytorch/issues/2",
        "stages": ["aoti"],
        "error_type": "RuntimeError",
        "message": "boom",
        "releases": ["2.10"],
    }
    base.update(changes)
    return {key: value for key, value in base.items() if value is not None}


def test_the_shipped_file_loads_and_links_only_github_issues() -> None:
    issues = known_issues.load()
    assert issues, "the shipped file holds the seeded entries"
    for issue in issues:
        assert issue.link == "" or issue.reference.startswith("pytorch/pytorch#"), issue


def test_the_shipped_file_labels_2_10s_codecache_failure_with_its_issue() -> None:
    issue = known_issues.label("aoti", "AttributeError", CODECACHE_MESSAGE, "2.10.0+cu128", "2.10.0+cu128")
    assert issue is not None and issue.reference == "pytorch/pytorch#173706"
    assert issue.words == "known upstream issue pytorch/pytorch#173706"
    assert known_issues.label("aoti", "AttributeError", CODECACHE_MESSAGE, "2.9.1+cu128") is None


def test_an_entry_without_an_upstream_reference_is_labelled_unconfirmed() -> None:
    assert CODECACHE.confirmed and CODECACHE.kind == "Known upstream issue"
    assert not INCLUDE.confirmed and INCLUDE.kind == "Unconfirmed issue"
    assert INCLUDE.words == "unconfirmed, no upstream issue on record"
    assert "known upstream" not in INCLUDE.words
    shipped = {issue.id: issue for issue in known_issues.load()}
    assert shipped["aoti-absolute-include"].kind == "Unconfirmed issue"  # no link in the file
    sighting = failures.Sighting(INCLUDE, ("2.5.1+cu124",), (("aoti_loads", 1),))
    shown = markdown_writer.write(d.Page("known", "Known", (d.Items((report_known.verdict(sighting),)),)))
    (line,) = [said for said in shown.splitlines() if said.startswith("- ")]
    assert line.startswith("- **Unconfirmed issue**: ") and "known upstream" not in line.lower()
    assert "no upstream issue on record" in line


@pytest.mark.parametrize(
    "stage, kind, message, release, made_on, wanted",
    [
        ("aoti", "AttributeError", CODECACHE_MESSAGE, "2.10.0+cu128", None, "codecache"),
        ("aoti", "AttributeError", CODECACHE_MESSAGE, "2.10.1", "2.6.0", "codecache"),
        ("aoti", "AttributeError", CODECACHE_MESSAGE, "2.1.0", None, None),  # 2.1 is not 2.10
        ("aoti", "AttributeError", CODECACHE_MESSAGE, "2.11.0+cu130", None, None),
        ("save/load", "AttributeError", CODECACHE_MESSAGE, "2.10.0", None, None),  # another stage
        ("aoti", "RuntimeError", CODECACHE_MESSAGE, "2.10.0", None, None),  # another class
        ("aoti", None, "load: AttributeError: " + CODECACHE_MESSAGE, "2.10.0", None, "codecache"),  # one line
        ("aoti", None, "load: " + CODECACHE_MESSAGE, "2.10.0", None, None),  # no class in the line
        ("aoti", "torch._inductor.exc.CppCompileError", "C++ compile error", "2.5.1+cu124", "2.5.1+cu124", "include"),
        ("aoti", "torch._inductor.exc.CppCompileError", "C++ compile error", "2.5.1+cu124", "2.4.1", None),
        ("aoti", "torch._inductor.exc.CppCompileError", "C++ compile error", "2.5.1+cu124", None, None),
        ("save/load", None, "load: TypeError: forward() got an unexpected keyword", "2.4.1+cu121", None, "save"),
        ("save/load", None, "load: TypeError: forward() got an unexpected keyword", "2.4.0", None, None),
        ("aoti", "AttributeError", CODECACHE_MESSAGE, "not a release", None, None),
    ],
)
def test_label_matches_stage_class_message_and_releases(
    stage: str, kind: Any, message: str, release: str, made_on: Any, wanted: Any
) -> None:
    found = known_issues.label(stage, kind, message, release, made_on, issues=ISSUES)
    assert (found.id if found else None) == wanted


@pytest.mark.parametrize(
    "table, words",
    [
        ({"issue": [entry(link="http://example.com/1")]}, "link must be an https"),
        ({"issue": [entry(stages=["compile"])]}, "unknown stage compile"),
        ({"issue": [entry(releases=[])]}, "at least one"),
        ({"issue": [entry(releases=["two.ten"])]}, "releases like 2.10"),
        ({"issue": [entry(message="(")]}, "not a regular expression"),
        ({"issue": [entry(summary="")]}, "summary must be non-empty text"),
        ({"issue": [entry(error_type=None)]}, "error_type must be"),
        ({"issue": [entry(colour="red")]}, "unknown field colour"),
        ({"issue": [entry(), entry()]}, "id 'x' is used more than once"),
        ({"issues": []}, "expected only [[issue]]"),
    ],
)
def test_a_bad_entry_is_an_error_naming_the_file_and_the_entry(table: Dict[str, Any], words: str) -> None:
    with pytest.raises(KnownIssueError) as raised:
        known_issues.parse(table, "known.toml")
    assert str(raised.value).startswith("known.toml: ")
    assert words in str(raised.value)


def test_an_entry_without_an_id_is_named_by_its_place() -> None:
    with pytest.raises(KnownIssueError, match=r"known.toml: \[\[issue\]\] number 2: id must be"):
        known_issues.parse({"issue": [entry(), entry(id=None, summary="")]}, "known.toml")


def test_an_unreadable_or_malformed_file_is_an_error_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "known.toml"
    broken.write_text("[[issue]\n")
    with pytest.raises(KnownIssueError, match="known.toml: not valid TOML"):
        known_issues.load(broken)
    with pytest.raises(KnownIssueError, match="missing.toml: cannot be read"):
        known_issues.load(tmp_path / "missing.toml")


def cell(**values: Any) -> Dict[str, Any]:
    base: Dict[str, Any] = {
        "release": "2.10.0+cu128",
        "case": "models/m",
        "mode": "strict",
        "status": "pass",
        "error_type": None,
        "error_message": None,
        "serialize_outcome": "ok",
        "serialize_error": None,
        "decompose_outcome": "ok",
        "decompose_error": None,
        "aoti_status": None,
        "aoti_error_type": None,
        "aoti_error": None,
    }
    base.update(values)
    return base


def test_failed_stages_names_each_stage_that_failed_after_a_pass() -> None:
    assert failures.failed_stages(cell()) == ()
    assert failures.failed_stages(cell(serialize_outcome="error")) == ("save/load",)
    assert failures.failed_stages(cell(decompose_outcome="error", aoti_status="mismatch")) == (
        "decomposition",
        "aoti",
    )
    # an AOTInductor outcome that tried nothing is no failure
    assert failures.failed_stages(cell(aoti_status="not-applicable")) == ()
    assert failures.failed_stages(cell(aoti_status="skipped", decompose_outcome="skipped")) == ()


def test_cell_issues_labels_each_failure_of_a_cell_by_its_stage() -> None:
    aoti = cell(aoti_status="error", aoti_error_type="AttributeError", aoti_error="load: " + CODECACHE_MESSAGE)
    assert failures.cell_issues(aoti, ISSUES) == {"aoti": CODECACHE}
    saved = cell(
        release="2.4.1+cu121", serialize_outcome="error", serialize_error="load: TypeError: unexpected keyword 'x'"
    )
    assert failures.cell_issues(saved, ISSUES) == {"save/load": SAVE}
    # the same text as the export's own failure is not the save/load stage's
    exported = cell(release="2.4.1+cu121", status="fail", error_type="TypeError", error_message="unexpected keyword")
    assert failures.cell_issues(exported, ISSUES) == {}


def test_sightings_count_labelled_failures_per_issue_across_cells_and_package_loads() -> None:
    cells = pd.DataFrame(
        [
            cell(aoti_status="error", aoti_error_type="AttributeError", aoti_error="load: " + CODECACHE_MESSAGE),
            cell(case="models/n"),  # passes: nothing to label
            cell(
                release="2.9.1+cu128",
                aoti_status="error",
                aoti_error_type="AttributeError",
                aoti_error="load: " + CODECACHE_MESSAGE,
            ),  # fmt: skip
        ]
    )
    loads = pd.DataFrame(
        [
            {"status": "load-error", "error_type": "AttributeError", "error_message": CODECACHE_MESSAGE,
             "torch_version": "2.10.0+cu128", "saved_torch_version": "2.6.0+cu124"},
            {"status": "load-error", "error_type": "torch._inductor.exc.CppCompileError",
             "error_message": "C++ compile error",
             "torch_version": "2.5.1+cu124", "saved_torch_version": "2.5.1+cu124"},
            {"status": "pass", "error_type": None, "error_message": None,
             "torch_version": "2.10.0+cu128", "saved_torch_version": "2.10.0+cu128"},
        ]
    )  # fmt: skip
    found = failures.sightings(cells, [("aoti", "package loads", loads)], ISSUES)
    assert [(s.issue.id, s.releases, s.counts, s.failures) for s in found] == [
        ("codecache", ("2.10.0+cu128",), (("cells", 1), ("package loads", 1)), 2),
        ("include", ("2.5.1+cu124",), (("package loads", 1),), 1),
    ]
    # a load table is a saved program's: the package's issue is not looked for there
    assert failures.sightings(cells.iloc[1:2], [("load", "loads", loads)], ISSUES) == ()
