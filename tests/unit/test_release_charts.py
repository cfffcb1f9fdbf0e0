"""Charts over the releases: pass rate, export time and transitions, each as the front page reads it."""

from __future__ import annotations

import re
from typing import Any, Dict, Tuple

import pandas as pd
import pytest

from matrix.contract.schema import MODES
from matrix.records import transitions
from matrix.report import release_charts

from .chart_support import assert_readable, history_of_kinds, interleaved_summary, render, table


def test_transition_chart_has_a_bar_pair_per_step_counting_the_front_pages_regressions():
    from matrix.report import transition_page

    cells = history_of_kinds()
    compared = transitions.pairs(cells)
    moves = transitions.collect(compared)
    steps = transitions.steps(compared, moves)
    assert len(steps) == 3 and steps[-1].count(*transitions.REGRESSIONS, *transitions.FIXES) == 0
    # The regressions the front page counts include a kind other than "regression" on both counts.
    assert {"regression", "wrong-result", "stage-regression"} <= set(moves["kind"])
    ax = release_charts.transitions_figure(release_charts.step_counts(steps)).axes[0]
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
    figure = release_charts.export_times_figure(cells)
    render(figure)
    ax = figure.axes[0]
    low, high = ax.get_ylim()
    shown = [t.get_text() for t, y in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= y <= high]
    assert shown == ["10 ms", "100 ms", "1 s"], shown
    assert all(t.get_text() == "" for t in ax.get_yticklabels(minor=True))


def test_a_narrow_range_of_export_times_still_gets_labelled_ticks():
    cells = table(cases=12, releases=3)
    cells["export_s"] = [0.12 + 0.3 * i / len(cells) for i in range(len(cells))]
    figure = release_charts.export_times_figure(cells)
    render(figure)
    ax = figure.axes[0]
    low, high = ax.get_ylim()
    shown = [t.get_text() for t, y in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= y <= high]
    assert len(shown) >= 2 and all(re.fullmatch(r"\d+(\.\d+)? (µs|ms|s|min)", text) for text in shown), shown


def test_durations_read_as_units():
    assert [release_charts.duration(s) for s in (5e-5, 0.01, 0.2, 1, 10, 90, 600)] == [
        "50 µs",
        "10 ms",
        "200 ms",
        "1 s",
        "10 s",
        "1.5 min",
        "10 min",
    ]


def test_pass_rate_is_one_line_per_mode_and_variant_family_with_the_build_change_marked():
    summary = interleaved_summary()
    figure = release_charts.pass_rate_figure(summary)
    ax = figure.axes[0]
    # One legend entry per mode; each variant family its own line, as transitions follow them: the CPU builds
    # between PyPI's releases are points of their own, never a bump on PyPI's line.
    assert sorted(line.get_label() for line in ax.get_lines() if line.get_label() in MODES) == ["non-strict", "strict"]
    lines = [line for line in ax.get_lines() if line.get_label().lstrip("_") in MODES]
    assert sorted((line.get_label().lstrip("_"), tuple(float(x) for x in line.get_xdata())) for line in lines) == [
        ("non-strict", (0.0, 2.0, 4.0, 5.0)), ("non-strict", (1.0, 3.0)),
        ("strict", (0.0, 2.0, 4.0, 5.0)), ("strict", (1.0, 3.0)),
    ]  # fmt: skip
    for line in lines:
        mode = line.get_label().lstrip("_")
        expected = (summary[summary["mode"] == mode]["pass_rate"] * 100).tolist()
        assert [float(y) for y in line.get_ydata()] == pytest.approx([expected[int(x)] for x in line.get_xdata()])
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
    figure = release_charts.pass_rate_figure(pd.concat([summary, extra], ignore_index=True))
    labels = [line.get_label() for line in figure.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert labels == ["strict", "non-strict", "strict [transformers==4.57.1]", "non-strict [transformers==4.57.1]"]


def test_pass_rate_axis_starts_at_zero_when_the_data_reaches_it():
    summary = interleaved_summary().assign(pass_rate=[0.02, 0.5] * 6)
    ax = release_charts.pass_rate_figure(summary).axes[0]
    assert ax.get_ylim()[0] == 0 and "axis starts" not in ax.get_ylabel()
