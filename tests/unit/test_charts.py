"""Charts: written, non-empty, stable, and readable with many cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import numpy as np
import pandas as pd

from matrix.records import tables, transitions
from matrix.report import charts, heatmaps, release_charts

from .chart_support import assert_readable, cell, history_of_kinds, interleaved_summary, is_png, render, table


def steps_of(cells: pd.DataFrame) -> List[transitions.Step]:
    compared = transitions.pairs(cells)
    return transitions.steps(compared, transitions.collect(compared))


def test_every_chart_is_written_and_non_empty(tmp_path: Path):
    cells = table()
    summary = tables.summary(cells)
    written = [
        *heatmaps.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path)),
        *heatmaps.status_overview(cells, tables.environment_labels(cells), str(tmp_path)),
        *release_charts.pass_rate(summary, str(tmp_path)),
        *release_charts.export_times(cells, str(tmp_path)),
        *release_charts.transition_counts(release_charts.step_counts(steps_of(cells)), str(tmp_path)),
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


def test_a_png_chart_has_a_palette_and_the_colours_matplotlib_drew(tmp_path: Path):
    import io

    from PIL import Image

    cells = table()
    figure = charts.new_figure(4, 2)
    figure.add_subplot().bar(["pass", "fail"], [3, 1], color=["#009E73", "#D55E00"])
    drawn = io.BytesIO()
    with charts.settings():
        figure.savefig(drawn, format="png")
    (path,) = charts.save(figure, str(tmp_path), "bars")
    with Image.open(tmp_path / path) as written, Image.open(drawn) as true_colour:
        assert written.mode == "P" and written.size == true_colour.size
        colours = {rgb for _, rgb in written.convert("RGB").getcolors(256) or []}
        ground = max(true_colour.convert("RGB").getcolors(1 << 24) or [])[1]
        # The bars' flat colours and the ground are kept exactly.
        assert {(0x00, 0x9E, 0x73), (0xD5, 0x5E, 0x00), ground} <= colours
    assert (tmp_path / path).stat().st_size < len(drawn.getvalue())
    assert len(cells) > 0


def test_charts_are_byte_stable(tmp_path: Path):
    cells = table()
    summary = tables.summary(cells)
    for out in ("a", "b"):
        release_charts.pass_rate(summary, str(tmp_path / out))
        heatmaps.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path / out))
        heatmaps.status_overview(cells, tables.environment_labels(cells), str(tmp_path / out))
        release_charts.transition_counts(release_charts.step_counts(steps_of(cells)), str(tmp_path / out))
    for name in ("pass-rate.png", "pass-rate.svg", "status-01.png", "status-overview.png", "transitions.png"):
        assert (tmp_path / "a" / "charts" / name).read_bytes() == (tmp_path / "b" / "charts" / name).read_bytes()


def test_nothing_to_draw_draws_nothing(tmp_path: Path):
    cells = table()
    failing = cells.assign(status="fail", export_s=None)
    assert release_charts.export_times(failing, str(tmp_path)) == []
    assert release_charts.transition_counts(release_charts.step_counts([]), str(tmp_path)) == []
    assert heatmaps.status_heatmaps(cells.iloc[0:0], pd.Series(dtype=object), str(tmp_path)) == []
    assert heatmaps.status_overview(cells.iloc[0:0], pd.Series(dtype=object), str(tmp_path)) == []
    assert not (tmp_path / "charts").exists()


def test_tex_and_control_characters_in_record_text_are_drawn_as_plain_text(tmp_path: Path):
    cells = table(cases=3, releases=2)
    cells.loc[cells["case"] == "case_with_a_long_name_001", "case"] = "$\\macro$"
    cells["variant"] = "$x^{2$"  # unbalanced: mathtext would refuse it
    cells["tags"] = [["$\\tag$"]] * len(cells)
    cells.loc[0, "case"] = "\x1b[31mred\x1b[0m\0"
    summary = tables.summary(cells)
    written = [
        *heatmaps.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path)),
        *release_charts.pass_rate(summary, str(tmp_path)),
    ]
    assert len(written) == 2 and all(is_png(tmp_path / c.path) for c in written)
    figure = release_charts.pass_rate_figure(summary)
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert legend == ["strict", "non-strict", "build: $x^{2$"]
    figure.canvas.draw()  # mathtext would raise on the unbalanced brace


def test_long_case_names_are_cut_in_charts():
    assert charts.label("x" * 300) == "x" * (charts.LABEL_CHARS - 1) + "…"
    assert charts.label("\x1b[1mbold\x1b[0m\ttab\nline") == "bold tab line"


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


def test_colours_come_from_the_colour_blind_safe_palette(tmp_path: Path):
    assert all(safe(colour) for colour in charts.COLORS.values())
    assert all(safe(colour) for colour in charts.MODE_COLORS.values())
    # The statuses a reader must tell apart are distinct colours, none of them grey.
    key = [charts.COLORS[s].upper() for s in ("pass", "mismatch", "fail", "crash", "timeout", "case-error")]
    assert len(set(key)) == len(key) and all(c in charts.OKABE_ITO for c in key)
    cells = history_of_kinds().assign(export_s=0.5)
    bars = release_charts.transitions_figure(release_charts.step_counts(steps_of(cells))).axes[0].patches
    assert bars and all(safe(c) for c in hexes(bar.get_facecolor() for bar in bars))
    ax = release_charts.pass_rate_figure(interleaved_summary()).axes[0]
    assert all(safe(c) for c in hexes(line.get_color() for line in ax.get_lines()))
    assert all(safe(c) for points in ax.collections for c in hexes(points.get_facecolors()))
    boxes = release_charts.export_times_figure(cells).axes[0].patches
    assert boxes and all(safe(c) for c in hexes(box.get_facecolor() for box in boxes))
    overview = heatmaps.overview_figure(cells, tables.environment_labels(cells))
    image = overview.axes[0].get_images()[0]
    assert all(safe(c) for c in hexes(image.cmap(range(image.cmap.N))))
    # The written heatmap: every colour that covers a visible share of the image is from the palette.
    from matplotlib.image import imread

    written = heatmaps.status_heatmaps(table(), tables.environment_labels(table()), str(tmp_path))
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
    # PyPI's 14 builds make 13 steps; the one CPU build is in a series of its own, never between them.
    assert len(steps) == 13
    figures = [
        heatmaps.overview_figure(cells, labels),
        release_charts.pass_rate_figure(tables.summary(cells)),
        release_charts.transitions_figure(release_charts.step_counts(steps)),
        release_charts.export_times_figure(cells),
    ]
    # The heatmaps share one layout: the first stands for them (drawing each costs a second).
    _, heatmap = next(heatmaps.status_heatmap_figures(cells, labels))
    for figure in figures + [heatmap]:
        assert_readable(figure)
        width, height = figure.get_size_inches()
        assert width <= 16 and height <= 14, (width, height)
    # A small matrix too: its overview is narrow, but its title and legend still fit.
    small = table(cases=4, releases=3)
    assert_readable(heatmaps.overview_figure(small, tables.environment_labels(small)))
    overview = figures[0]
    assert [ax.get_images()[0].get_array().shape for ax in overview.axes] == [(15, 157), (15, 157)]
    # The tags named under the overview do not overlap one another.
    renderer = render(overview)
    names = sorted((t.get_window_extent(renderer) for t in overview.axes[-1].get_xticklabels()), key=lambda b: b.x0)
    assert len(names) == 4 and all(a.x1 <= b.x0 for a, b in zip(names, names[1:]))
