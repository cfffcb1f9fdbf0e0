"""Charts: written, non-empty, stable, and readable with many cases."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd

from matrix.records import tables, transitions
from matrix.report import charts

PNG = b"\x89PNG\r\n\x1a\n"


def table(cases: int = 12, releases: int = 4) -> pd.DataFrame:
    rows: List[Dict[str, Any]] = []
    statuses = ["pass", "fail", "mismatch", "crash", "timeout", "not-applicable", "case-error"]
    for r in range(releases):
        for c in range(cases):
            for m, mode in enumerate(("strict", "non-strict")):
                status = statuses[(c + r + m) % len(statuses)] if c % 3 else "pass"
                rows.append(
                    {
                        "release": "2.%d.0" % (r + 1),
                        "variant": "cpu",
                        "python": "3.11",
                        "case": "case_with_a_long_name_%03d" % c,
                        "mode": mode,
                        "tags": ["torch.cond"] if c % 2 else ["python.closure", "torch.map"],
                        "status": status,
                        "graph_hash": None,
                        "ops": None,
                        "decomposed_ops": None,
                        "error_type": None,
                        "error_message": None,
                        "export_s": 0.05 * (1 + c) * (1 + r) if status in ("pass", "mismatch") else None,
                    }
                )
    return pd.DataFrame(rows)


def is_png(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 1000 and path.read_bytes().startswith(PNG)


def test_every_chart_is_written_and_non_empty(tmp_path: Path):
    cells = table()
    summary = tables.summary(cells)
    moves = transitions.find(cells)
    written = [
        *charts.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path)),
        *charts.pass_rate(summary, str(tmp_path)),
        *charts.export_times(cells, str(tmp_path)),
        *charts.transition_counts(moves, str(tmp_path)),
    ]
    assert [c.path for c in written] == [
        "charts/status-01.png",
        "charts/pass-rate.png",
        "charts/export-time.png",
        "charts/transitions.png",
    ]
    for chart in written:
        assert is_png(tmp_path / chart.path), chart
        assert chart.files[0] == chart.path
    svg = (tmp_path / "charts" / "pass-rate.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<dc:date>" not in svg


def test_many_cases_are_split_across_images_keeping_tags_together(tmp_path: Path):
    cells = table(cases=120, releases=8)
    groups = charts.heatmap_groups(cells, rows=50)
    assert all(len(g) <= 50 for g in groups)
    assert sorted(case for g in groups for _, case in g) == sorted(set(cells["case"]))
    # A tag that fits in one image is not split across two.
    for tag in {t for g in groups for t, _ in g}:
        holding = [i for i, g in enumerate(groups) if any(t == tag for t, _ in g)]
        size = sum(1 for g in groups for t, _ in g if t == tag)
        if size <= 50:
            assert len(holding) == 1, tag
    written = charts.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path))
    assert len(written) == len(groups) >= 3
    assert all(is_png(tmp_path / c.path) for c in written)


def test_primary_tag_is_the_first_sorted_tag():
    assert charts.primary_tag(["torch.map", "python.closure"]) == "python.closure"
    assert charts.primary_tag([]) == "untagged"
    assert charts.primary_tag(None) == "untagged"


def test_charts_are_byte_stable(tmp_path: Path):
    cells = table()
    summary = tables.summary(cells)
    for out in ("a", "b"):
        charts.pass_rate(summary, str(tmp_path / out))
        charts.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path / out))
    for name in ("pass-rate.png", "pass-rate.svg", "status-01.png"):
        assert (tmp_path / "a" / "charts" / name).read_bytes() == (tmp_path / "b" / "charts" / name).read_bytes()


def test_nothing_to_draw_draws_nothing(tmp_path: Path):
    cells = table()
    failing = cells.assign(status="fail", export_s=None)
    assert charts.export_times(failing, str(tmp_path)) == []
    assert charts.transition_counts(transitions.find(cells.iloc[0:0]), str(tmp_path)) == []
    assert charts.status_heatmaps(cells.iloc[0:0], pd.Series(dtype=object), str(tmp_path)) == []
    assert not (tmp_path / "charts").exists()


def test_tex_and_control_characters_in_record_text_are_drawn_as_plain_text(tmp_path: Path):
    cells = table(cases=3, releases=2)
    cells.loc[cells["case"] == "case_with_a_long_name_001", "case"] = "$\\macro$"
    cells["variant"] = "$x^{2$"  # unbalanced: mathtext would refuse it
    cells["tags"] = [["$\\tag$"]] * len(cells)
    cells.loc[0, "case"] = "\x1b[31mred\x1b[0m\0"
    summary = tables.summary(cells)
    written = [
        *charts.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path)),
        *charts.pass_rate(summary, str(tmp_path)),
    ]
    assert len(written) == 2 and all(is_png(tmp_path / c.path) for c in written)
    figure = charts.pass_rate_figure(summary)
    assert [t.get_text() for t in figure.axes[0].get_legend().get_texts()] == ["non-strict, $x^{2$", "strict, $x^{2$"]


def test_long_case_names_are_cut_in_charts():
    assert charts.label("x" * 300) == "x" * (charts.LABEL_CHARS - 1) + "…"
    assert charts.label("\x1b[1mbold\x1b[0m\ttab\nline") == "bold tab line"


def move(before: str, after: str, kind: str) -> Dict[str, Any]:
    return {"before": before, "after": after, "kind": kind, "case": "c", "mode": "strict", "variant": "cpu"}


def test_transition_chart_names_its_bars_in_words_and_counts_in_whole_cells():
    moves = pd.DataFrame(
        [
            move("2.4.0", "2.5.0", "regression"),
            move("2.4.0", "2.5.0", "regression"),
            move("2.5.0", "2.6.0", "fix"),
            move("2.5.0", "2.6.0", "graph-change"),
        ]
    )
    figure = charts.transitions_figure(moves)
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["regressions", "fixes"]
    ticks = [float(t) for t in ax.get_yticks()]
    assert len(ticks) >= 2 and all(t.is_integer() for t in ticks), ticks


def test_a_variants_pass_rate_line_never_crosses_another_variants_build():
    # (release, variant, pass rate): the +cpu builds sit between the pypi releases on the axis.
    points = [
        ("2.12.0", "pypi", 0.5),
        ("2.12.0+cpu", "cpu", 0.6),
        ("2.13.0", "pypi", 0.7),
        ("2.13.0+cpu", "cpu", 0.8),
        ("2.14.0", "pypi", 0.9),
        ("2.15.0", "pypi", 1.0),
    ]
    summary = pd.DataFrame(
        [{"release": r, "variant": v, "python": "3.11", "mode": "strict", "pass_rate": rate} for r, v, rate in points]
    )
    figure = charts.pass_rate_figure(summary)
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert sorted(lines) == ["strict, cpu", "strict, pypi"]
    for variant, own in (("pypi", [0, 2, 4, 5]), ("cpu", [1, 3])):
        xs = [float(x) for x in lines["strict, " + variant].get_xdata()]
        assert [x for x in xs if not math.isnan(x)] == own
        # Drawn segments join neighbouring positions only: 2.14.0 to 2.15.0, never across a +cpu build.
        segments = [(a, b) for a, b in zip(xs, xs[1:]) if not (math.isnan(a) or math.isnan(b))]
        assert all(b - a == 1 for a, b in segments), segments
        assert segments == ([(4.0, 5.0)] if variant == "pypi" else [])
