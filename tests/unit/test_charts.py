"""Charts: written, non-empty, stable, and readable with many cases."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pandas as pd
import pytest

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
                        "with_set": "",
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


def steps_of(cells: pd.DataFrame) -> List[transitions.Step]:
    compared = transitions.pairs(cells)
    return transitions.steps(compared, transitions.collect(compared))


def test_every_chart_is_written_and_non_empty(tmp_path: Path):
    cells = table()
    summary = tables.summary(cells)
    written = [
        *charts.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path)),
        *charts.status_overview(cells, str(tmp_path)),
        *charts.pass_rate(summary, str(tmp_path)),
        *charts.export_times(cells, str(tmp_path)),
        *charts.transition_counts(steps_of(cells), str(tmp_path)),
    ]
    assert [c.path for c in written] == [
        "charts/status-01.png",
        "charts/status-overview.png",
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
        charts.status_overview(cells, str(tmp_path / out))
        charts.transition_counts(steps_of(cells), str(tmp_path / out))
    for name in ("pass-rate.png", "pass-rate.svg", "status-01.png", "status-overview.png", "transitions.png"):
        assert (tmp_path / "a" / "charts" / name).read_bytes() == (tmp_path / "b" / "charts" / name).read_bytes()


def test_nothing_to_draw_draws_nothing(tmp_path: Path):
    cells = table()
    failing = cells.assign(status="fail", export_s=None)
    assert charts.export_times(failing, str(tmp_path)) == []
    assert charts.transition_counts(steps_of(cells.iloc[0:0]), str(tmp_path)) == []
    assert charts.status_heatmaps(cells.iloc[0:0], pd.Series(dtype=object), str(tmp_path)) == []
    assert charts.status_overview(cells.iloc[0:0], str(tmp_path)) == []
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
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert legend == ["strict", "non-strict", "build: $x^{2$"]
    figure.canvas.draw()  # mathtext would raise on the unbalanced brace


def test_long_case_names_are_cut_in_charts():
    assert charts.label("x" * 300) == "x" * (charts.LABEL_CHARS - 1) + "…"
    assert charts.label("\x1b[1mbold\x1b[0m\ttab\nline") == "bold tab line"


def render(figure: Any) -> Any:
    """Draw ``figure`` with the Agg backend, as the report saves it; returns the renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def assert_readable(figure: Any) -> None:
    """Everything drawn (axes, tick labels, titles, legends, texts) lies inside the image, in 7 pt or more."""
    from matplotlib.text import Text

    drawn = figure.get_tightbbox(render(figure))  # in inches
    width, height = figure.get_size_inches()
    assert drawn.x0 >= -0.01 and drawn.y0 >= -0.01 and drawn.x1 <= width + 0.01 and drawn.y1 <= height + 0.01, drawn
    sizes = [t.get_fontsize() for t in figure.findobj(Text) if t.get_visible() and t.get_text()]
    assert sizes and min(sizes) >= 7


def hexes(colours: Any) -> List[str]:
    from matplotlib.colors import to_hex

    return [to_hex(c).upper() for c in colours]


def is_grey(colour: str) -> bool:
    return colour[1:3] == colour[3:5] == colour[5:7]


def safe(colour: str) -> bool:
    """A colour of the colour-blind-safe palette, or a grey (white and black included)."""
    return colour.upper() in charts.OKABE_ITO or is_grey(colour.upper())


def tint(colour: str) -> bool:
    """A palette colour, a grey, or a palette colour blended with white (the cells' white rules, anti-aliased)."""
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)
    for base in charts.OKABE_ITO:
        ink = np.array([int(base[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)
        share = np.clip(np.dot(255 - rgb, 255 - ink) / max(np.dot(255 - ink, 255 - ink), 1), 0, 1)
        if np.abs(255 - share * (255 - ink) - rgb).max() <= 3:
            return True
    return safe(colour)


def cell(release: str, case: str, mode: str, status: str, variant: str = "pypi", **extra: Any) -> Dict[str, Any]:
    row = {"release": release, "variant": variant, "python": "3.11", "with_set": "", "case": case, "mode": mode}
    row.update(tags=["torch.cond"], status=status, graph_hash=None, fingerprint_version=None, ops=None)
    row.update(decomposed_ops=None, error_type=None, error_message=None, export_s_runs=None)
    row.update(serialize_status="ok" if status == "pass" else None, decompose_status=None)
    row.update(extra)
    return row


def history_of_kinds() -> pd.DataFrame:
    """Four releases: a regression and its fix, a wrong result, a stage regression and its fix, a quiet last step."""
    story = {
        "breaks_then_heals": ["pass", "fail", "pass", "pass"],
        "error_becomes_mismatch": ["fail", "mismatch", "mismatch", "mismatch"],
        "save_breaks_then_heals": ["pass", "pass", "pass", "pass"],
        "steady": ["pass", "pass", "pass", "pass"],
    }
    serialize = {"save_breaks_then_heals": ["ok", "error", "ok", "ok"]}
    rows = []
    for index, release in enumerate(["2.4.0", "2.5.0", "2.6.0", "2.7.0"]):
        for case, statuses in story.items():
            for mode in ("strict", "non-strict"):
                row = cell(release, case, mode, statuses[index])
                if case in serialize:
                    row["serialize_status"] = serialize[case][index]
                rows.append(row)
    return pd.DataFrame(rows)


def test_transition_chart_has_a_bar_pair_per_step_counting_the_front_pages_regressions():
    from matrix.report import transition_page

    cells = history_of_kinds()
    compared = transitions.pairs(cells)
    moves = transitions.collect(compared)
    steps = transitions.steps(compared, moves)
    assert len(steps) == 3 and steps[-1].count(*transitions.REGRESSIONS, *transitions.FIXES) == 0
    # The regressions the front page counts include a kind other than "regression" on both counts.
    assert {"regression", "wrong-result", "stage-regression"} <= set(moves["kind"])
    ax = charts.transitions_figure(steps).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [transition_page.title(s) for s in steps]
    heights: Dict[Tuple[int, str], float] = {}
    for bar in ax.patches:
        middle = bar.get_x() + bar.get_width() / 2
        key = (round(middle), "regressions" if middle < round(middle) else "fixes")
        heights[key] = heights.get(key, 0) + bar.get_height()
    for i, step in enumerate(steps):
        assert heights[(i, "regressions")] == step.count(*transitions.REGRESSIONS), step
        assert heights[(i, "fixes")] == step.count(*transitions.FIXES), step
    front_page = int(moves["kind"].isin(transitions.REGRESSIONS).sum())
    assert sum(h for (_, side), h in heights.items() if side == "regressions") == front_page == 6
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    # Named as the front page names them: a failing export that now gives wrong numbers is "now wrong numbers".
    assert legend == [
        "status regressions (2)", "now wrong numbers (2)", "stage regressions (2)", "status fixes (2)",
        "stage fixes (2)",
    ]  # fmt: skip
    ticks = [float(t) for t in ax.get_yticks()]
    assert len(ticks) >= 2 and all(t.is_integer() for t in ticks), ticks


def test_export_time_ticks_are_plain_durations():
    cells = table(cases=12, releases=3)
    # From 3 ms to 3 s: three decades, labelled at the powers of ten.
    cells["export_s"] = [0.003 * 1000 ** (i / (len(cells) - 1)) for i in range(len(cells))]
    figure = charts.export_times_figure(cells)
    render(figure)
    ax = figure.axes[0]
    low, high = ax.get_ylim()
    shown = [t.get_text() for t, y in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= y <= high]
    assert shown == ["10 ms", "100 ms", "1 s"], shown
    assert all(t.get_text() == "" for t in ax.get_yticklabels(minor=True))


def test_a_narrow_range_of_export_times_still_gets_labelled_ticks():
    cells = table(cases=12, releases=3)
    cells["export_s"] = [0.12 + 0.3 * i / len(cells) for i in range(len(cells))]
    figure = charts.export_times_figure(cells)
    render(figure)
    ax = figure.axes[0]
    low, high = ax.get_ylim()
    shown = [t.get_text() for t, y in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= y <= high]
    assert len(shown) >= 2 and all(re.fullmatch(r"\d+(\.\d+)? (µs|ms|s|min)", text) for text in shown), shown


def test_durations_read_as_units():
    assert [charts.duration(s) for s in (5e-5, 0.01, 0.2, 1, 10, 90, 600)] == [
        "50 µs",
        "10 ms",
        "200 ms",
        "1 s",
        "10 s",
        "1.5 min",
        "10 min",
    ]


def interleaved_summary() -> pd.DataFrame:
    # (release, variant, strict, non-strict): the +cpu builds sit between the pypi releases on the axis.
    points = [
        ("2.12.0", "pypi", 0.712, 0.80),
        ("2.12.0+cpu", "cpu", 0.842, 0.85),
        ("2.13.0", "pypi", 0.866, 0.87),
        ("2.13.0+cpu", "cpu", 0.856, 0.88),
        ("2.14.0", "pypi", 0.893, 0.90),
        ("2.15.0", "pypi", 0.901, 0.908),
    ]
    rows = []
    for release, variant, strict, non_strict in points:
        for mode, rate in (("strict", strict), ("non-strict", non_strict)):
            rows.append(
                {"release": release, "variant": variant, "python": "3.11", "with_set": ""}
                | {"mode": mode, "pass_rate": rate}
            )
    return pd.DataFrame(rows)


def test_pass_rate_is_one_unbroken_line_per_mode_with_the_build_change_marked():
    summary = interleaved_summary()
    figure = charts.pass_rate_figure(summary)
    ax = figure.axes[0]
    lines = [line for line in ax.get_lines() if line.get_label() in ("strict", "non-strict")]
    assert sorted(line.get_label() for line in lines) == ["non-strict", "strict"]
    for line in lines:
        xs = [float(x) for x in line.get_xdata()]
        assert xs == [0, 1, 2, 3, 4, 5]  # every environment, in release order, no gap
        expected = summary[summary["mode"] == line.get_label()]["pass_rate"] * 100
        assert [float(y) for y in line.get_ydata()] == pytest.approx(expected.tolist())
    # A variant's points share a marker, and the two variants' markers differ.
    by_marker: Dict[Tuple[Any, ...], set] = {}
    for points in ax.collections:
        shape = tuple(map(tuple, points.get_paths()[0].vertices.round(3)))
        by_marker.setdefault(shape, set()).update(float(x) for x, _ in points.get_offsets())
    assert sorted(by_marker.values(), key=len) == [{1.0, 3.0}, {0.0, 2.0, 4.0, 5.0}]
    # A dotted rule before each change of build: 2.12.0 → +cpu → 2.13.0 → +cpu → 2.14.0.
    rules = sorted(float(line.get_xdata()[0]) for line in ax.get_lines() if line.get_linestyle() == ":")
    assert rules == [0.5, 1.5, 2.5, 3.5]
    # The axis fits the 71–91 % range, and says where it starts.
    low, high = ax.get_ylim()
    assert 60 <= low <= 71.2 and 90.8 <= high <= 100 and high - low <= 40
    assert "axis starts at %d %%" % low in ax.get_ylabel()
    assert_readable(figure)


def test_pass_rate_of_a_with_set_is_a_line_of_its_own():
    summary = interleaved_summary()
    extra = summary[summary["variant"] == "pypi"].assign(with_set="transformers==4.57.1", pass_rate=0.5)
    figure = charts.pass_rate_figure(pd.concat([summary, extra], ignore_index=True))
    labels = [line.get_label() for line in figure.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert labels == ["strict", "non-strict", "strict [transformers==4.57.1]", "non-strict [transformers==4.57.1]"]


def test_pass_rate_axis_starts_at_zero_when_the_data_reaches_it():
    summary = interleaved_summary().assign(pass_rate=[0.02, 0.5] * 6)
    ax = charts.pass_rate_figure(summary).axes[0]
    assert ax.get_ylim()[0] == 0 and "axis starts" not in ax.get_ylabel()


def test_colours_come_from_the_colour_blind_safe_palette(tmp_path: Path):
    assert all(safe(colour) for colour in charts.COLORS.values())
    assert all(safe(colour) for colour in charts.MODE_COLORS.values())
    # The statuses a reader must tell apart are distinct colours, none of them grey.
    key = [charts.COLORS[s].upper() for s in ("pass", "mismatch", "fail", "crash", "timeout", "case-error")]
    assert len(set(key)) == len(key) and all(c in charts.OKABE_ITO for c in key)
    cells = history_of_kinds().assign(export_s=0.5)
    bars = charts.transitions_figure(steps_of(cells)).axes[0].patches
    assert bars and all(safe(c) for c in hexes(bar.get_facecolor() for bar in bars))
    ax = charts.pass_rate_figure(interleaved_summary()).axes[0]
    assert all(safe(c) for c in hexes(line.get_color() for line in ax.get_lines()))
    assert all(safe(c) for points in ax.collections for c in hexes(points.get_facecolors()))
    boxes = charts.export_times_figure(cells).axes[0].patches
    assert boxes and all(safe(c) for c in hexes(box.get_facecolor() for box in boxes))
    overview = charts.overview_figure(cells)
    image = overview.axes[0].get_images()[0]
    assert all(safe(c) for c in hexes(image.cmap(range(image.cmap.N))))
    # The written heatmap: every colour that covers a visible share of the image is from the palette.
    from matplotlib.image import imread

    written = charts.status_heatmaps(table(), tables.environment_labels(table()), str(tmp_path))
    pixels = imread(str(tmp_path / written[0].path))[:, :, :3].reshape(-1, 3)
    colours, counts = np.unique((pixels * 255).round().astype(int), axis=0, return_counts=True)
    common = ["#%02X%02X%02X" % tuple(c) for c, n in zip(colours, counts) if n >= 0.005 * len(pixels)]
    assert {charts.COLORS["pass"].upper(), charts.COLORS["fail"].upper()} <= set(common)
    assert all(tint(c) for c in common), ", ".join(common)


def largest() -> pd.DataFrame:
    """The largest realistic matrix: 15 releases × 157 cases × 2 modes, a CPU build among PyPI's."""
    statuses = ["pass"] * 6 + ["fail", "mismatch", "crash", "timeout", "not-applicable", "case-error"]
    tags = ["python.context-manager", "torch.dynamic-shape", "torch.higher-order-op", "python.data-structure"]
    rows = []
    for minor in range(1, 16):
        release, variant = (
            ("2.%d.0+cpu" % minor, "cpu") if minor == 13 else ("2.%d.1+cu12%d" % (minor, minor % 9), "pypi")
        )
        for c in range(157):
            for m, mode in enumerate(("strict", "non-strict")):
                status = statuses[(c * 7 + minor * 3 + m) % len(statuses)]
                name = "%s/a_case_with_a_realistically_long_name_%03d" % (tags[c % 4].split(".")[1], c)
                rows.append(cell(release, name, mode, status, variant, tags=[tags[c % 4 if c % 9 else c % 3]]))
                rows[-1]["export_s"] = 0.02 * (1 + (c * minor) % 97) if status in ("pass", "mismatch") else None
    return pd.DataFrame(rows)


def test_every_chart_of_the_largest_matrix_is_readable_and_uncut():
    cells = largest()
    labels = tables.environment_labels(cells)
    steps = steps_of(cells)
    assert len(steps) == 14
    figures = [
        charts.overview_figure(cells),
        charts.pass_rate_figure(tables.summary(cells)),
        charts.transitions_figure(steps),
        charts.export_times_figure(cells),
    ]
    # The heatmaps share one layout: the first stands for them (drawing each costs a second).
    _, heatmap = next(charts.status_heatmap_figures(cells, labels))
    for figure in figures + [heatmap]:
        assert_readable(figure)
        width, height = figure.get_size_inches()
        assert width <= 16 and height <= 14, (width, height)
    # A small matrix too: its overview is narrow, but its title and legend still fit.
    assert_readable(charts.overview_figure(table(cases=4, releases=3)))
    overview = figures[0]
    assert [ax.get_images()[0].get_array().shape for ax in overview.axes] == [(15, 157), (15, 157)]
    # The tags named under the overview do not overlap one another.
    renderer = render(overview)
    names = sorted((t.get_window_extent(renderer) for t in overview.axes[-1].get_xticklabels()), key=lambda b: b.x0)
    assert len(names) == 4 and all(a.x1 <= b.x0 for a, b in zip(names, names[1:]))
