"""Charts over the releases: pass rate and export time per release, regressions and fixes per transition.

Releases run left to right in the records' release order. A mode has the same colour in the
pass-rate and export-time charts (MODE_COLORS), and the transition chart counts regressions
and fixes as the front page counts them.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.schema import MODES
from matrix.records import store, tables, transitions
from matrix.records.transitions import Step
from matrix.report import transition_page
from matrix.report.charts import (
    COLORS,
    MODE_COLORS,
    OKABE_ITO,
    Chart,
    label,
    new_figure,
    one_chart,
    settings,
)

MODE_STYLE = {"strict": "-", "non-strict": "--"}
# A variant's marker on the pass-rate line: a change of marker is a change of build.
VARIANT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
# Kinds stacked in one bar are told apart by hatching, in the order of their list.
KIND_HATCHES = ("", "////", "....", "xxxx", "\\\\")


def pass_rate(summary: pd.DataFrame, out: str) -> List[Chart]:
    """Pass rate (pass / applicable cells) per environment: a line per mode, a marker per variant."""
    return one_chart(pass_rate_figure(summary), out, "pass-rate", "Pass rate per release", svg=True)


@settings()
def pass_rate_figure(summary: pd.DataFrame) -> Optional[Any]:
    """The pass-rate chart's figure, or None when no pass rate is known.

    One line per mode and variant family through its environments in release order (a build of
    another variant between two PyPI releases is a point of its own, never a bump on PyPI's line);
    the marker names the variant, and a change of build shows as a dotted rule.
    Environments that ran with a ``--with`` set, whose cases and packages differ, get a line of their own.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    data = summary.dropna(subset=["pass_rate"])
    if data.empty:
        return None
    # Where a release ran under several Pythons, the newest stands for it (as in transitions).
    data = store.sort_cells(store.newest_python(data), release="release", extra=["mode"])
    sets = data["with_set"] if "with_set" in data.columns else pd.Series([""] * len(data), index=data.index)
    series_of = [str(m) if not (isinstance(w, str) and w) else "%s [%s]" % (m, w) for m, w in zip(data["mode"], sets)]
    data = data.assign(
        _env=tables.environment_labels(data).to_numpy(),
        _rate=100 * data["pass_rate"].astype(float),
        _series=series_of,
        _plain=[not (isinstance(w, str) and w) for w in sets],
    )
    envs = list(dict.fromkeys(data["_env"]))
    position = {env: i for i, env in enumerate(envs)}
    variant_of = {env: str(variant) for env, variant in zip(data["_env"], data["variant"])}
    variants = list(dict.fromkeys(variant_of[env] for env in envs))
    marker = {variant: VARIANT_MARKERS[i % len(VARIANT_MARKERS)] for i, variant in enumerate(variants)}
    series = sorted(dict.fromkeys(zip(data["_series"], data["mode"], data["_plain"])), key=lambda s: not s[2])
    rates: Dict[Tuple[str, str], float] = {
        (str(s), str(e)): float(r) for s, e, r in zip(data["_series"], data["_env"], data["_rate"])
    }
    figure = new_figure(max(7.0, 3.0 + 0.5 * len(envs)), 4.6)
    ax = figure.subplots()
    low, high = rate_limits(data["_rate"].tolist())
    handles: List[Any] = []
    for index, (name, mode, plain) in enumerate(series):
        line = data[data["_series"] == name]
        xs = [position[env] for env in line["_env"]]
        ys = line["_rate"].tolist()
        colour = MODE_COLORS.get(str(mode), OKABE_ITO[(index + 2) % len(OKABE_ITO)])
        style = MODE_STYLE.get(str(mode), ":") if plain else ":"
        drawn: List[Any] = []
        for variant in variants:
            own = [(x, y) for x, y, env in zip(xs, ys, line["_env"]) if variant_of[env] == variant]
            if own:
                # One line per variant family, as transitions follow them: another variant's build sits
                # between two PyPI releases as a point of its own, not as a bump on PyPI's line.
                named = label(name) if not drawn else "_" + label(name)  # one legend entry per series
                drawn += ax.plot(*zip(*own), style, color=colour, linewidth=1.6, label=named)
                ax.scatter(*zip(*own), marker=marker[variant], color=colour, s=28, zorder=3)
        handles += drawn[:1]
        for x, y, env in zip(xs, ys, line["_env"]):
            others = [rates[(str(s), str(env))] for s, _, _ in series if s != name and (str(s), str(env)) in rates]
            # Each value sits on the side away from the other lines' points at that release.
            above = not others or y > max(others) or (y == max(others) and index == 0)
            ax.annotate(
                "%.1f" % y,
                (x, y),
                xytext=(0, 5 if above else -5),
                textcoords="offset points",
                ha="center",
                va="bottom" if above else "top",
                fontsize=7,
                color=colour,
            )
    for i in range(1, len(envs)):
        if variant_of[envs[i]] != variant_of[envs[i - 1]]:
            ax.axvline(i - 0.5, color="#888888", linestyle=":", linewidth=1)
            ax.text(
                i - 0.45,
                0.02,
                "build: %s" % label(variant_of[envs[i]]),
                transform=ax.get_xaxis_transform(),
                rotation=90,
                fontsize=7,
                color="#555555",
                va="bottom",
                ha="left",
            )
    _across(ax, envs)
    ax.set_ylim(low, high)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
    ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
    what = "pass rate, % of applicable cells"
    ax.set_ylabel(what if low <= 0 else "%s\n(axis starts at %d %%)" % (what, low))
    ax.grid(axis="y", alpha=0.3)
    handles += [
        Line2D([], [], color="#555555", marker=marker[v], linestyle="none", label="build: %s" % label(v))
        for v in variants
    ]
    figure.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    ax.set_title("Pass rate per release")
    return figure


def _across(ax: Any, names: Sequence[Any]) -> None:
    """The x axis: one slanted label per release (or transition), from the first to the last."""
    ax.set_xticks(range(len(names)), [label(name) for name in names], rotation=60, ha="right")
    ax.set_xlim(-0.6, len(names) - 0.4)


def rate_limits(percents: Sequence[float]) -> Tuple[float, float]:
    """The pass-rate axis: the data's range widened to multiples of 5 %, with room for the value labels."""
    low = max(0.0, 5 * math.floor((min(percents) - 3) / 5))
    high = min(100.0, 5 * math.ceil((max(percents) + 3) / 5))
    if high - low < 10:
        low = max(0.0, high - 10)
    return low, high + 0.07 * (high - low)


def export_times(table: pd.DataFrame, out: str) -> List[Chart]:
    """Distribution of median export time per release and mode, for cells that exported (log scale)."""
    return one_chart(export_times_figure(table), out, "export-time", "Export time per release")


@settings()
def export_times_figure(table: pd.DataFrame) -> Optional[Any]:
    """The export-time chart's figure, or None when no cell exported with a time."""
    done = table[table["status"].isin(["pass", "mismatch"])]
    done = done.assign(export_s=pd.to_numeric(done["export_s"], errors="coerce"))
    done = done[done["export_s"] > 0]
    if done.empty:
        return None
    releases = store.ordered(done["release"])
    modes = [m for m in MODES if m in set(done["mode"])]
    figure = new_figure(max(6.0, 1.5 + 0.5 * len(releases)), 4.2)
    ax = figure.subplots()
    width = 0.8 / len(modes)
    for index, mode in enumerate(modes):
        part = done[done["mode"] == mode]
        samples = [part.loc[part["release"] == r, "export_s"].astype(float).tolist() for r in releases]
        keep = [i for i, s in enumerate(samples) if s]
        boxes = ax.boxplot(
            [samples[i] for i in keep],
            positions=[i - 0.4 + width * (index + 0.5) for i in keep],
            widths=width * 0.9,
            patch_artist=True,
            showfliers=True,
            flierprops={"markersize": 2},
            medianprops={"color": "black"},
        )
        for box in boxes["boxes"]:
            box.set_facecolor(MODE_COLORS.get(str(mode), OKABE_ITO[2]))
        if boxes["boxes"]:
            boxes["boxes"][0].set_label(mode)
    ax.set_yscale("log")
    _duration_axis(ax.yaxis, done["export_s"].astype(float).tolist())
    _across(ax, releases)
    ax.set_ylabel("export time per cell (median of runs)")
    ax.grid(axis="y", alpha=0.3, which="both")
    figure.legend(loc="outside right upper", fontsize=8, frameon=False)
    ax.set_title("Export time per release (cells that exported)")
    return figure


def duration(seconds: float) -> str:
    """A duration as a tick label reads: ``50 µs``, ``10 ms``, ``1 s``, ``2 min``."""
    for unit, size in (("min", 60.0), ("s", 1.0), ("ms", 1e-3)):
        if seconds >= size:
            return "%g %s" % (float("%.3g" % (seconds / size)), unit)
    return "%g µs" % float("%.3g" % (seconds * 1e6))


def _duration_axis(axis: Any, seconds: Sequence[float]) -> None:
    """Log-scale ticks labelled as durations: powers of ten, and 2 and 5 between them when the data spans little."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    # Powers of ten alone when at least three fall in the data's range, else 2 and 5 between them too.
    powers = math.floor(math.log10(max(seconds))) - math.ceil(math.log10(min(seconds))) + 1 if seconds else 0
    subs = (1.0,) if powers >= 3 else (1.0, 2.0, 5.0)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda value, _: duration(value) if value > 0 else ""))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(float(s) for s in range(2, 10) if s not in subs)))
    axis.set_minor_formatter(NullFormatter())


def transition_counts(counts: pd.DataFrame, out: str) -> List[Chart]:
    """Regressions and fixes per release transition (:func:`step_counts`), all modes and variants together."""
    return one_chart(transitions_figure(counts), out, "transitions", "Regressions and fixes per release transition")


def step_counts(steps: Sequence[Step]) -> pd.DataFrame:
    """One row per release transition, in the steps' order: its title and its transitions of each kind charted."""
    kinds = list(dict.fromkeys([*transitions.REGRESSIONS, *transitions.FIXES]))
    rows = [{"transition": transition_page.title(step), **{kind: step.count(kind) for kind in kinds}} for step in steps]
    return pd.DataFrame(rows, columns=["transition", *kinds])


@settings()
def transitions_figure(counts: pd.DataFrame) -> Optional[Any]:
    """The transition chart's figure: a bar of regressions and one of fixes per step (:func:`step_counts`); None
    without steps.

    Each bar stacks its kinds (the front page's regression kinds, transitions.REGRESSIONS,
    then transitions.FIXES), so a bar is as tall as the count the front page gives for that transition; the legend
    names each kind as the front page does (transition_page.COUNTED).
    """
    from matplotlib.ticker import MaxNLocator

    if counts.empty:
        return None
    positions = range(len(counts))
    figure = new_figure(max(7.0, 3.0 + 0.55 * len(counts)), 6.0)
    ax = figure.subplots()
    groups = ((-0.2, transitions.REGRESSIONS, COLORS["fail"]), (0.2, transitions.FIXES, COLORS["pass"]))
    tallest = 0
    for offset, kinds, colour in groups:
        bottom = [0] * len(counts)
        bars = None
        for kind, hatch in zip(kinds, KIND_HATCHES * len(kinds)):
            values = [int(v) for v in counts[kind]]
            bars = ax.bar(
                [i + offset for i in positions],
                values,
                width=0.4,
                bottom=bottom,
                color=colour,
                hatch=hatch,
                edgecolor="white",
                linewidth=0.6,
                label="%s (%d)" % (transition_page.COUNTED[kind], sum(values)),
            )
            bottom = [b + v for b, v in zip(bottom, values)]
        if bars is not None:
            ax.bar_label(bars, labels=[str(total) for total in bottom], fontsize=7, padding=1)
        tallest = max([tallest, *bottom])
    _across(ax, list(counts["transition"]))
    # Counts of cells: a tick at 0.5 would read as half a cell.
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("cells (case and mode) that changed")
    # Set, not left to margins: the stacked bars' bottoms pin the autoscaled top to the tallest bar.
    ax.set_ylim(0, max(tallest, 1) * 1.12)
    figure.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    ax.set_title("Regressions and fixes per release transition")
    return figure
