"""The front page's real-models table, and --with sets side by side, built from records through the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd

from matrix.report import build as report

from conftest import report_cell, report_environment

OLD, NEW = "transformers==4.57.1", "transformers==5.2.0"


def environment(release: str, run_id: str, dependency_set: str, added: Dict[str, str]) -> Dict[str, Any]:
    record = report_environment(release, "2025-03-01T10:00:00+00:00")
    return dict(record, run_id=run_id, dependency_set=dependency_set, added_packages=added)


def ran(release: str, case: str, run_id: str, dependency_set: str, with_set: str = "", **extra: Any) -> List[Dict]:
    """The cell of each mode, as one run in a set's environment records them."""
    return [
        report_cell(release, case, mode=mode, run_id=run_id, dependency_set=dependency_set, with_set=with_set, **extra)
        for mode in ("strict", "non-strict")
    ]


def records() -> List[Dict[str, Any]]:
    return [
        # A case with its own set (PEP 723) on two releases: one column per release, as any case.
        environment("2.5.1", "a", "torchvision", {"torchvision": "0.20.1", "pillow": "11.0.0"}),
        *ran("2.5.1", "real_models/tv_resnet18", "a", "torchvision"),
        environment("2.9.1", "b", "torchvision", {"torchvision": "0.24.1", "pillow": "12.0.0"}),
        *ran("2.9.1", "real_models/tv_resnet18", "b", "torchvision"),
        # The same model run with two --with sets on 2.9.1: two columns, side by side.
        environment("2.9.1", "c", OLD, {"transformers": "4.57.1", "tokenizers": "0.22.1"}),
        *ran("2.9.1", "real_models/hf_bert", "c", OLD, OLD),
        environment("2.9.1", "d", NEW, {"transformers": "5.2.0", "tokenizers": "0.23.0"}),
        report_cell("2.9.1", "real_models/hf_bert", "fail", run_id="d", dependency_set=NEW, with_set=NEW),
        report_cell("2.9.1", "real_models/hf_bert", mode="non-strict", run_id="d", dependency_set=NEW, with_set=NEW),
        # A set the resolver refused on 2.5.1: recorded without an environment record.
        *ran("2.5.1", "real_models/hf_bert", "e", OLD, OLD, status="not-applicable", graph_hash=None),
        report_environment("2.9.1", "2025-03-01T09:00:00+00:00"),
        *ran("2.9.1", "plain", "f", ""),
        # A model whose own set failed to install on 2.5.1: an env-error, not a missing record.
        environment("2.9.1", "g", "timm", {"timm": "1.0.31"}),
        *ran("2.9.1", "real_models/timm_resnet", "g", "timm"),
        {
            **{k: v for k, v in report_environment("2.5.1", "2025-03-01T08:00:00+00:00").items() if k != "started_at"},
            "kind": "env-error",
            "dependency_set": "timm",
            "error_type": "matrix.envs.install.InstallError",
            "error_message": "network unreachable",
            "finished_at": "2025-03-01T08:00:00+00:00",
        },
    ]


def build(tmp_path: Path) -> Path:
    folder = tmp_path / "records"
    folder.mkdir()
    lines = "".join(json.dumps(record) + "\n" for record in records())
    (folder / "records.jsonl").write_text(lines, encoding="utf-8")
    out = tmp_path / "report"
    report.build_report([str(folder)], str(out), charts=False)
    return out


def section(index: str) -> List[str]:
    start = index.index("## Real models")
    return index[start : index.index("\n## ", start + 1)].splitlines()


def test_each_with_set_is_a_column_and_each_release_shows_the_versions_it_resolved(tmp_path: Path):
    out = build(tmp_path)
    lines = section((out / "index.md").read_text(encoding="utf-8"))
    assert lines[0] == "## Real models (3)"
    # 2.5.1 lacks the timm set (an env-error): its columns say the build is incomplete.
    header = (
        "| model | 2.5.1 (incomplete) | 2.5.1 \\[transformers==4.57.1\\] (incomplete) | 2.9.1"
        " | 2.9.1 \\[transformers==4.57.1\\] |"
    )
    assert lines[4] == header + " 2.9.1 \\[transformers==5.2.0\\] |"
    rows = {line.split(" | ")[0]: line.split(" | ")[1:] for line in lines[6:]}
    assert rows["| [real_models/hf_bert](cases/real_models__hf_bert.md) (transformers)"] == [
        "·", "➖ ➖ –", "·", "✅ ✅ 4.57.1", "❌ ✅ 5.2.0 |",
    ]  # fmt: skip
    assert rows["| [real_models/tv_resnet18](cases/real_models__tv_resnet18.md) (torchvision)"] == [
        "✅ ✅ 0.20.1", "·", "✅ ✅ 0.24.1", "·", "· |",
    ]  # fmt: skip
    assert rows["| [real_models/timm_resnet](cases/real_models__timm_resnet.md) (timm)"] == [
        "env-error", "·", "✅ ✅ 1.0.31", "·", "· |",
    ]  # fmt: skip
    passes = ["1/1 · 1/1 (1: env-error)", "0/1 · 0/1", "2/2 · 2/2", "1/1 · 1/1", "0/1 · 1/1 |"]
    assert rows["| **passes**"] == passes
    assert "plain" not in "\n".join(lines)  # only the pack's cases
    cells = pd.read_parquet(out / "cells.parquet")
    bert = cells[(cells["case"] == "real_models/hf_bert") & (cells["release"] == "2.9.1")]
    assert sorted(zip(bert["with_set"], bert["mode"], bert["status"])) == [
        (OLD, "non-strict", "pass"),
        (OLD, "strict", "pass"),
        (NEW, "non-strict", "pass"),
        (NEW, "strict", "fail"),
    ]


def test_the_pass_rates_and_the_case_page_tell_the_sets_apart(tmp_path: Path):
    out = build(tmp_path)
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "| 2.9.1 \\[transformers==5.2.0\\] | 2 | 0.0% | 100.0% |" in index
    assert "| 2.9.1 \\[transformers==4.57.1\\] | 2 | 100.0% | 100.0% |" in index
    page = (out / "cases" / "real_models__hf_bert.md").read_text(encoding="utf-8")
    assert "- **declared by the case (PEP 723)**: nothing\n" in page
    assert "- **added with --with**: `transformers==4.57.1`; `transformers==5.2.0`\n" in page
    assert "| 2.9.1 \\[transformers==4.57.1\\] | 4.57.1 |" in page
    assert "| 2.9.1 \\[transformers==5.2.0\\] | 5.2.0 |" in page
    assert "| 2.5.1 \\[transformers==4.57.1\\] (incomplete) | – |" in page
    assert "tokenizers 0.23.0, transformers 5.2.0" in page  # every package each environment added
    resnet = (out / "cases" / "real_models__tv_resnet18.md").read_text(encoding="utf-8")
    assert "- **declared by the case (PEP 723)**: `torchvision`\n" in resnet and "added with" not in resnet
    assert "| 2.5.1 (incomplete) | 0.20.1 |" in resnet and "| 2.9.1 | 0.24.1 |" in resnet
    plain = (out / "cases" / "plain.md").read_text(encoding="utf-8")
    assert "## Dependencies" not in plain


def test_a_report_without_real_models_has_no_such_section(tmp_path: Path):
    folder = tmp_path / "records"
    folder.mkdir()
    rows = [report_environment("2.9.1", "2025-03-01T09:00:00+00:00"), *ran("2.9.1", "plain", "f", "")]
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report.build_report([str(folder)], str(tmp_path / "out"), charts=False)
    assert "## Real models" not in (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
