"""The report's charts (matplotlib, no pyplot state): status heatmaps, pass rate, export time, transitions.

Every colour comes from Okabe and Ito's colour-blind-safe palette (OKABE_ITO) or is a grey:
the statuses' colours are the schema's, the modes' are MODE_COLORS. A continuous scale (a
share from 0 to 1) is SCALE, cividis, which reads the same to every common colour blindness
and in greyscale.

Charts are written byte-stable: no creation date or software stamp in the files and a
fixed SVG id salt, so rebuilding a report from the same records changes nothing.

Labels come from the records (case names, tags, releases, variants) and are drawn as
plain text: ``$`` does not start mathtext and TeX is never run, whatever the user's
matplotlib settings say, so a name such as ``$\\macro$`` is shown rather than parsed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar, cast

import pandas as pd

from matrix.records import store, tables, transitions
from matrix.records.transitions import Step
from matrix.report import files as report_files
from matrix.report import markdown as md
from matrix.report import transition_page
from matrix.schema import MODES, Status

# Rows per heatmap image: more would make the case names unreadably small.
HEATMAP_ROWS = 50
# Okabe and Ito's palette: black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple.
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
COLORS = {status.value: status.colour for status in Status}
NO_RECORD_COLOR = "#ffffff"
# The colour map of a continuous scale, and the grey of a square with no value on it.
SCALE = "cividis"
NO_VALUE_COLOR = "#e8e8e8"
MODE_COLORS = {"strict": "#0072B2", "non-strict": "#E69F00"}
MODE_STYLE = {"strict": "-", "non-strict": "--"}
# A variant's marker on the pass-rate line: a change of marker is a change of build.
VARIANT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
# The cell table's columns that status_heatmaps reads: all a process drawing them needs to be sent.
HEATMAP_COLUMNS = ["release", "variant", "python", "with_set", "case", "mode", "status", "tags"]
_RC: Dict[str, Any] = {
    "svg.hashsalt": "torch-export-matrix",
    "svg.fonttype": "path",
    "font.size": 9,
    "text.parse_math": False,
    "text.usetex": False,
}
# Longest label drawn: a longer case name would widen a heatmap by inches.
LABEL_CHARS = 60
# The legend's name for each kind of transition counted, as the front page names it; another kind is named
# after itself. The regressions bar stacks transitions.REGRESSIONS, the fixes bar transitions.FIXES.
KIND_LABELS = transition_page.COUNTED
# Kinds stacked in one bar are told apart by hatching, in the order of their list.
KIND_HATCHES = ("", "////", "....", "xxxx", "\\\\")


@dataclass(frozen=True)
class Chart:
    """A written chart: its path relative to the report folder and what it shows."""

    path: str  # the PNG shown on the page
    title: str
    files: Tuple[str, ...] = ()  # every file written for it (PNG, SVG)


def prepare() -> None:
    """Import the parts of matplotlib the charts use, e.g. once before forking processes that draw."""
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.colors  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.patches  # noqa: F401
    import matplotlib.ticker  # noqa: F401


Drawing = TypeVar("Drawing", bound=Callable[..., Any])


@contextlib.contextmanager
def _settings() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(_RC):  # type: ignore[arg-type]
        yield


def _with_settings(draw: Drawing) -> Drawing:
    """Build and save a chart under :data:`_RC`: text objects take their settings when created."""

    @functools.wraps(draw)
    def drawing(*args: Any, **kwargs: Any) -> Any:
        with _settings():
            return draw(*args, **kwargs)

    return cast(Drawing, drawing)


def summary_charts(
    summary: pd.DataFrame,
    steps: Sequence[Step],
    table: pd.DataFrame,
    out: str,
    only: Optional[Sequence[str]] = None,
) -> Dict[str, List[Chart]]:
    """The charts of the report's front page, by section: status overview, pass rate, transitions, export time."""
    draw = {
        "overview": lambda: status_overview(table, out),
        "summary": lambda: pass_rate(summary, out),
        "transitions": lambda: transition_counts(steps, out),
        "export-time": lambda: export_times(table, out),
    }
    return {name: make() for name, make in draw.items() if only is None or name in only}


def _figure(width: float, height: float, constrained: bool = True) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained" if constrained else None)


def _save(figure: Any, out: str, name: str, svg: bool = False) -> List[str]:
    os.makedirs(report_files.target(out, "charts"), exist_ok=True)
    written = []
    with _settings():
        png = "charts/%s.png" % name
        figure.savefig(report_files.target(out, png), format="png", metadata={"Software": None})
        written.append(png)
        if svg:
            path = "charts/%s.svg" % name
            figure.savefig(report_files.target(out, path), format="svg", metadata={"Date": None, "Creator": None})
            written.append(path)
    return written


def label(value: object, limit: int = LABEL_CHARS) -> str:
    """Record text as a chart label: no terminal escapes or control characters, cut to ``limit``."""
    text = md.plain(str(value)).replace("\t", " ").replace("\r", " ").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _chart(files: List[str], title: str) -> List[Chart]:
    return [Chart(files[0], title, tuple(files))]


def primary_tag(tags: object) -> str:
    """The tag a case is filed under in grouped views: its first tag in sorted order."""
    if tags is None or isinstance(tags, (str, float)):
        return "untagged"
    names = sorted(str(t) for t in tags)  # type: ignore[attr-defined]
    return names[0] if names else "untagged"


def heatmap_groups(table: pd.DataFrame, rows: int = HEATMAP_ROWS) -> List[List[Tuple[str, str]]]:
    """Cases as (tag, case) in chunks of at most ``rows``, keeping each tag's cases together where they fit."""
    first = table.drop_duplicates("case")
    by_tag: Dict[str, List[str]] = {}
    for case, tags in zip(first["case"], first["tags"]):
        by_tag.setdefault(primary_tag(tags), []).append(str(case))
    # A tag too big for one image is cut into near-equal parts rather than a full image and a sliver.
    parts: List[List[Tuple[str, str]]] = []
    for tag in sorted(by_tag, key=lambda t: (t == "untagged", t)):
        members = [(tag, case) for case in sorted(by_tag[tag])]
        count = -(-len(members) // rows)
        size = -(-len(members) // count)
        parts.extend(members[i : i + size] for i in range(0, len(members), size))
    chunks: List[List[Tuple[str, str]]] = [[]]
    for part in parts:
        if chunks[-1] and len(chunks[-1]) + len(part) > rows:
            chunks.append([])
        chunks[-1].extend(part)
    return [chunk for chunk in chunks if chunk]


@_with_settings
def status_heatmaps(table: pd.DataFrame, labels: pd.Series, out: str) -> List[Chart]:
    """One image per group of cases: case × environment, a panel per mode, tags on the right."""
    charts: List[Chart] = []
    for number, (title, figure) in enumerate(status_heatmap_figures(table, labels), 1):
        files = _save(figure, out, "status-%02d" % number)
        charts.append(Chart(files[0], title, tuple(files)))
    return charts


def status_heatmap_figures(table: pd.DataFrame, labels: pd.Series) -> Iterator[Tuple[str, Any]]:
    """Each status heatmap's title (naming its tags) and figure, drawn one at a time as they are asked for."""
    if table.empty:
        return
    frame = table.assign(_column=labels)
    columns = list(dict.fromkeys(store.sort_cells(frame, release="release")["_column"]))
    status_of: Dict[Tuple[str, str, str], str] = {
        (str(case), str(mode), str(column)): status
        for case, mode, column, status in zip(frame["case"], frame["mode"], frame["_column"], frame["status"])
    }
    modes = [m for m in MODES if m in set(frame["mode"])]
    groups = heatmap_groups(table)
    for number, group in enumerate(groups, 1):
        title = "Status by case and release" + (" (%d of %d)" % (number, len(groups)) if len(groups) > 1 else "")
        with _settings():
            figure = _heatmap(group, columns, modes, status_of, title)
        tags = list(dict.fromkeys(tag for tag, _ in group))
        yield "%s: %s" % (title, ", ".join(tags)), figure


# Sizes in inches; the layout is computed, not searched, because constrained layout over
# hundreds of tick labels costs seconds per image.
_CELL_W, _CELL_H, _CHAR_W = 0.26, 0.19, 0.062


def _heatmap(
    group: Sequence[Tuple[str, str]],
    columns: List[str],
    modes: List[str],
    status_of: Dict[Tuple[str, str, str], str],
    title: str,
) -> Any:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    statuses = list(COLORS)
    codes = {s: i + 1 for i, s in enumerate(statuses)}
    colormap = ListedColormap([NO_RECORD_COLOR] + [COLORS[s] for s in statuses])
    cases = [case for _, case in group]
    case_labels = [label(case) for case in cases]
    column_labels = [label(column) for column in columns]
    left = 0.3 + _CHAR_W * max(len(c) for c in case_labels)
    right = 0.3 + _CHAR_W * max(len(label(t)) for t, _ in group)
    bottom = 0.95 + _CHAR_W * max(len(c) for c in column_labels)
    top, gap = 0.8, 0.25
    panel_w, panel_h = max(1.2, _CELL_W * len(columns)), _CELL_H * len(cases)
    width = max(left + len(modes) * panel_w + (len(modes) - 1) * gap + right, 6.0)
    height = bottom + panel_h + top
    figure = _figure(width, height, constrained=False)
    # Center the panels when the minimum width leaves room.
    left += (width - (left + len(modes) * panel_w + (len(modes) - 1) * gap + right)) / 2
    spans = _tag_spans(group)
    for index, mode in enumerate(modes):
        x = left + index * (panel_w + gap)
        ax = figure.add_axes((x / width, bottom / height, panel_w / width, panel_h / height))
        values = [[codes.get(status_of.get((case, mode, col), ""), 0) for col in columns] for case in cases]
        ax.imshow(values, cmap=colormap, vmin=0, vmax=len(statuses), aspect="auto", interpolation="nearest")
        ax.set_title(mode)
        ax.set_xticks(range(len(columns)), column_labels, rotation=90, fontsize=8)
        if index == 0:
            ax.set_yticks(range(len(cases)), case_labels, fontsize=8)
        else:
            ax.set_yticks([])
        ax.vlines([c + 0.5 for c in range(len(columns) - 1)], -0.5, len(cases) - 0.5, color="white", linewidth=0.6)
        ax.hlines([r + 0.5 for r in range(len(cases) - 1)], -0.5, len(columns) - 0.5, color="white", linewidth=0.6)
        ax.hlines([start - 0.5 for _, start, _ in spans[1:]], -0.5, len(columns) - 0.5, color="black", linewidth=1)
        ax.tick_params(length=2)
        if index == len(modes) - 1:
            for tag, start, end in spans:
                ax.text(len(columns) - 0.2, (start + end) / 2, label(tag), fontsize=8, va="center", clip_on=False)
    figure.legend(
        handles=[Patch(color=COLORS[s], label=s) for s in statuses]
        + [Patch(facecolor=NO_RECORD_COLOR, edgecolor="#999999", label="no record")],
        loc="lower center",
        ncol=4,
        frameon=False,
        fontsize=8,
    )
    figure.suptitle(title, y=1 - 0.2 / height, va="top")
    return figure


OVERVIEW_TITLE = "Status of every case in every release"


@_with_settings
def status_overview(table: pd.DataFrame, out: str) -> List[Chart]:
    """The whole status grid in one image for the front page: a column per case, a row per environment and mode."""
    figure = overview_figure(table)
    if figure is None:
        return []
    return _chart(_save(figure, out, "status-overview"), OVERVIEW_TITLE + " (the status grid page names each case)")


# Sizes in inches: a case's column narrows down to the least width still seen as a stripe.
_COLUMN_W, _ROW_H, _CASES_W, _TAG_CHAR_W = (0.05, 0.22), 0.2, 10.0, 0.055


@_with_settings
def overview_figure(table: pd.DataFrame) -> Optional[Any]:
    """The overview's figure: a panel per mode, columns grouped by tag (named below), None for no cells."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    if table.empty:
        return None
    frame = table.assign(_env=tables.environment_labels(table).to_numpy())
    envs = list(dict.fromkeys(store.sort_cells(frame, release="release")["_env"]))
    group = [member for chunk in heatmap_groups(table, rows=max(1, table["case"].nunique())) for member in chunk]
    cases = [case for _, case in group]
    status_of = {
        (str(case), str(mode), str(env)): status
        for case, mode, env, status in zip(frame["case"], frame["mode"], frame["_env"], frame["status"])
    }
    modes = [m for m in MODES if m in set(frame["mode"])]
    statuses = list(COLORS)
    codes = {s: i + 1 for i, s in enumerate(statuses)}
    colormap = ListedColormap([NO_RECORD_COLOR] + [COLORS[s] for s in statuses])
    env_labels = [label(env) for env in envs]
    spans = _tag_spans(group)
    column_w = min(max(_CASES_W / len(cases), _COLUMN_W[0]), _COLUMN_W[1])
    panel_w, panel_h = column_w * len(cases), _ROW_H * len(envs)
    left = 0.4 + _CHAR_W * max(len(e) for e in env_labels)
    tags_h = 0.25 + _TAG_CHAR_W * max(len(label(tag)) for tag, _, _ in spans)
    # A legend on one line where the panels are wide enough, else on two.
    columns = len(statuses) + 1 if left + panel_w >= 9.0 else -(-(len(statuses) + 1) // 2)
    top, gap, legend_h = 0.9, 0.45, 0.45 if columns > len(statuses) else 0.65
    width = max(left + panel_w + 0.4, 6.5)
    height = top + len(modes) * panel_h + (len(modes) - 1) * gap + tags_h + legend_h
    figure = _figure(width, height, constrained=False)
    # Center the panels when the minimum width leaves room.
    left += (width - (left + panel_w + 0.4)) / 2
    for index, mode in enumerate(modes):
        y = height - top - (index + 1) * panel_h - index * gap
        ax = figure.add_axes((left / width, y / height, panel_w / width, panel_h / height))
        values = [[codes.get(status_of.get((case, mode, env), ""), 0) for case in cases] for env in envs]
        ax.imshow(values, cmap=colormap, vmin=0, vmax=len(statuses), aspect="auto", interpolation="nearest")
        ax.set_title(mode, fontsize=9, loc="left")
        ax.set_yticks(range(len(envs)), env_labels, fontsize=8)
        ax.hlines([r + 0.5 for r in range(len(envs) - 1)], -0.5, len(cases) - 0.5, color="white", linewidth=0.8)
        ax.vlines([start - 0.5 for _, start, _ in spans[1:]], -0.5, len(envs) - 0.5, color="black", linewidth=0.8)
        ax.tick_params(length=2)
        if index == len(modes) - 1:
            ax.set_xticks(*_tag_ticks(spans, column_w), rotation=90, fontsize=7)
        else:
            ax.set_xticks([])
    figure.legend(
        handles=[Patch(color=COLORS[s], label=s) for s in statuses]
        + [Patch(facecolor=NO_RECORD_COLOR, edgecolor="#999999", label="no record")],
        loc="lower center",
        ncol=columns,
        frameon=False,
        fontsize=8,
    )
    figure.suptitle(OVERVIEW_TITLE, y=1 - 0.12 / height, va="top")
    figure.text(
        0.5,
        1 - 0.42 / height,
        "%d cases (a column each, grouped by tag) × %d releases" % (len(cases), len(envs)),
        ha="center",
        va="top",
        fontsize=8,
    )
    return figure


# Tag names below the overview are at least this far apart (inches), or the later one is left out.
_TAG_SPACING = 0.13


def _tag_ticks(spans: Sequence[Tuple[str, int, int]], column_w: float) -> Tuple[List[float], List[str]]:
    """Where to name each tag under the overview: its span's middle, leaving out names that would overlap."""
    positions: List[float] = []
    names: List[str] = []
    for tag, start, end in spans:
        middle = (start + end) / 2
        if positions and (middle - positions[-1]) * column_w < _TAG_SPACING:
            continue
        positions.append(middle)
        names.append(label(tag))
    return positions, names


def _tag_spans(group: Sequence[Tuple[str, str]]) -> List[Tuple[str, int, int]]:
    """Runs of rows filed under the same tag: (tag, first row, last row)."""
    spans: List[Tuple[str, int, int]] = []
    for row, (tag, _) in enumerate(group):
        if spans and spans[-1][0] == tag:
            spans[-1] = (tag, spans[-1][1], row)
        else:
            spans.append((tag, row, row))
    return spans


@_with_settings
def pass_rate(summary: pd.DataFrame, out: str) -> List[Chart]:
    """Pass rate (pass / applicable cells) per environment: a line per mode, a marker per variant."""
    figure = pass_rate_figure(summary)
    if figure is None:
        return []
    return _chart(_save(figure, out, "pass-rate", svg=True), "Pass rate per release")


@_with_settings
def pass_rate_figure(summary: pd.DataFrame) -> Optional[Any]:
    """The pass-rate chart's figure, or None when no pass rate is known.

    One unbroken line per mode through every environment in release order; the marker names
    the variant, so a change of build shows on the line (and as a dotted rule) instead of cutting it.
    Environments that ran with a ``--with`` set, whose cases and packages differ, get a line of their own.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    data = summary.dropna(subset=["pass_rate"])
    if data.empty:
        return None
    # Where a release ran under several Pythons, the newest stands for it (as in transitions).
    data = data.assign(_python=store.rank(data["python"].astype(object))).sort_values("_python", kind="stable")
    added = ["with_set"] if "with_set" in data.columns else []
    data = data.drop_duplicates(["release", "variant", *added, "mode"], keep="last").drop(columns="_python")
    data = store.sort_cells(data, release="release", extra=["mode"])
    sets = data["with_set"] if added else pd.Series([""] * len(data), index=data.index)
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
    figure = _figure(max(7.0, 3.0 + 0.5 * len(envs)), 4.6)
    ax = figure.subplots()
    low, high = rate_limits(data["_rate"].tolist())
    handles: List[Any] = []
    for index, (name, mode, plain) in enumerate(series):
        line = data[data["_series"] == name]
        xs = [position[env] for env in line["_env"]]
        ys = line["_rate"].tolist()
        colour = MODE_COLORS.get(str(mode), OKABE_ITO[(index + 2) % len(OKABE_ITO)])
        style = MODE_STYLE.get(str(mode), ":") if plain else ":"
        handles += ax.plot(xs, ys, style, color=colour, linewidth=1.6, label=label(name))
        for variant in variants:
            own = [(x, y) for x, y, env in zip(xs, ys, line["_env"]) if variant_of[env] == variant]
            if own:
                ax.scatter(*zip(*own), marker=marker[variant], color=colour, s=28, zorder=3)
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
    ax.set_xticks(range(len(envs)), [label(env) for env in envs], rotation=60, ha="right")
    ax.set_xlim(-0.6, len(envs) - 0.4)
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


def rate_limits(percents: Sequence[float]) -> Tuple[float, float]:
    """The pass-rate axis: the data's range widened to multiples of 5 %, with room for the value labels."""
    low = max(0.0, 5 * math.floor((min(percents) - 3) / 5))
    high = min(100.0, 5 * math.ceil((max(percents) + 3) / 5))
    if high - low < 10:
        low = max(0.0, high - 10)
    return low, high + 0.07 * (high - low)


@_with_settings
def export_times(table: pd.DataFrame, out: str) -> List[Chart]:
    """Distribution of median export time per release and mode, for cells that exported (log scale)."""
    figure = export_times_figure(table)
    if figure is None:
        return []
    return _chart(_save(figure, out, "export-time"), "Export time per release")


@_with_settings
def export_times_figure(table: pd.DataFrame) -> Optional[Any]:
    """The export-time chart's figure, or None when no cell exported with a time."""
    done = table[table["status"].isin(["pass", "mismatch"])]
    done = done.assign(export_s=pd.to_numeric(done["export_s"], errors="coerce"))
    done = done[done["export_s"] > 0]
    if done.empty:
        return None
    releases = store.ordered(done["release"])
    modes = [m for m in MODES if m in set(done["mode"])]
    figure = _figure(max(6.0, 1.5 + 0.5 * len(releases)), 4.2)
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
    ax.set_xticks(range(len(releases)), [label(r) for r in releases], rotation=60, ha="right")
    ax.set_xlim(-0.6, len(releases) - 0.4)
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


@_with_settings
def transition_counts(steps: Sequence[Step], out: str) -> List[Chart]:
    """Regressions and fixes per release transition, all modes and variants together."""
    figure = transitions_figure(steps)
    if figure is None:
        return []
    return _chart(_save(figure, out, "transitions"), "Regressions and fixes per release transition")


def step_counts(steps: Sequence[Step]) -> pd.DataFrame:
    """One row per release transition, in the steps' order: its title and its transitions of each kind charted."""
    kinds = list(dict.fromkeys([*transitions.REGRESSIONS, *transitions.FIXES]))
    rows = [{"transition": transition_page.title(step), **{kind: step.count(kind) for kind in kinds}} for step in steps]
    return pd.DataFrame(rows, columns=["transition", *kinds])


def kind_label(kind: str) -> str:
    """A kind of transition as the chart's legend names it."""
    return KIND_LABELS.get(kind, kind.replace("-", " ") + "s")


@_with_settings
def transitions_figure(steps: Sequence[Step]) -> Optional[Any]:
    """The transition chart's figure: a bar of regressions and one of fixes per step; None without steps.

    Each bar stacks its kinds (the front page's regression kinds, transitions.REGRESSIONS,
    then transitions.FIXES), so a bar is as tall as the count the front page gives for that transition.
    """
    from matplotlib.ticker import MaxNLocator

    counts = step_counts(steps)
    if counts.empty:
        return None
    positions = range(len(counts))
    figure = _figure(max(7.0, 3.0 + 0.55 * len(counts)), 6.0)
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
                label="%s (%d)" % (kind_label(kind), sum(values)),
            )
            bottom = [b + v for b, v in zip(bottom, values)]
        if bars is not None:
            ax.bar_label(bars, labels=[str(total) for total in bottom], fontsize=7, padding=1)
        tallest = max([tallest, *bottom])
    ax.set_xticks(list(positions), [label(title) for title in counts["transition"]], rotation=60, ha="right")
    ax.set_xlim(-0.6, len(counts) - 0.4)
    # Counts of cells: a tick at 0.5 would read as half a cell.
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("cells (case and mode) that changed")
    # Set, not left to margins: the stacked bars' bottoms pin the autoscaled top to the tallest bar.
    ax.set_ylim(0, max(tallest, 1) * 1.12)
    figure.legend(loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    ax.set_title("Regressions and fixes per release transition")
    return figure


# --- reusing charts whose data did not change -------------------------------------------------

KEYS = "charts/.chart-keys.json"


def chart_key(name: str, *inputs: Any) -> str:
    """What a chart group depends on: its name, its input tables, this module and matplotlib's version."""
    import hashlib
    from importlib import metadata

    digest = hashlib.sha256(("%s\0%s\0" % (name, metadata.version("matplotlib"))).encode())
    with open(__file__, "rb") as f:
        digest.update(f.read())
    for value in inputs:
        if isinstance(value, (pd.DataFrame, pd.Series)):
            digest.update(value.to_csv().encode())
        else:
            digest.update(repr(value).encode())
    return digest.hexdigest()


def previous_keys(out: str) -> Dict[str, Any]:
    """The chart groups the last build drew: key and charts per group name, or nothing."""
    try:
        with open(report_files.target(out, KEYS), encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def reusable(out: str, previous: Dict[str, Any], name: str, key: str) -> Optional[List[Chart]]:
    """The charts a previous build drew from the same data, when every file is still there."""
    entry = previous.get(name)
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    try:
        charts = [Chart(str(c["path"]), str(c["title"]), tuple(str(f) for f in c["files"])) for c in entry["charts"]]
    except (KeyError, TypeError):
        return None
    files = [path for chart in charts for path in chart.files]
    if not all(os.path.isfile(report_files.target(out, path)) for path in files):
        return None
    return charts


def write_keys(out: str, groups: Dict[str, Tuple[str, List[Chart]]]) -> str:
    """Record each group's key and charts for the next build; returns the file's path in the report."""
    stored = {
        name: {"key": key, "charts": [{"path": c.path, "title": c.title, "files": list(c.files)} for c in charts]}
        for name, (key, charts) in sorted(groups.items())
    }
    report_files.write_text(out, KEYS, json.dumps(stored, indent=1, sort_keys=True) + "\n")
    return KEYS
