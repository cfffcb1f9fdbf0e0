"""The report's charts (matplotlib, no pyplot state): status heatmaps, pass rate, export time, transitions.

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

from matrix.records import store
from matrix.report import files as report_files
from matrix.report import markdown as md
from matrix.schema import MODES, Status

# Rows per heatmap image: more would make the case names unreadably small.
HEATMAP_ROWS = 50
COLORS = {status.value: status.colour for status in Status}
NO_RECORD_COLOR = "#ffffff"
MODE_STYLE = {"strict": "-", "non-strict": "--"}
# The cell table's columns that status_heatmaps reads: all a process drawing them needs to be sent.
HEATMAP_COLUMNS = ["release", "variant", "python", "case", "mode", "status", "tags"]
_RC: Dict[str, Any] = {
    "svg.hashsalt": "torch-export-matrix",
    "svg.fonttype": "path",
    "font.size": 9,
    "text.parse_math": False,
    "text.usetex": False,
}
# Longest label drawn: a longer case name would widen a heatmap by inches.
LABEL_CHARS = 60
# The legend's name for each kind of transition counted.
KIND_LABELS = {"regression": "regressions", "fix": "fixes"}


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
    summary: pd.DataFrame, moves: pd.DataFrame, table: pd.DataFrame, out: str, only: Optional[Sequence[str]] = None
) -> Dict[str, List[Chart]]:
    """The charts of the report's summary sections, by section: pass rate, transitions, export time."""
    draw = {
        "summary": lambda: pass_rate(summary, out),
        "transitions": lambda: transition_counts(moves, out),
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
    if table.empty:
        return []
    frame = table.assign(_column=labels)
    columns = list(dict.fromkeys(store.sort_cells(frame, release="release")["_column"]))
    status_of: Dict[Tuple[str, str, str], str] = {
        (str(case), str(mode), str(column)): status
        for case, mode, column, status in zip(frame["case"], frame["mode"], frame["_column"], frame["status"])
    }
    modes = [m for m in MODES if m in set(frame["mode"])]
    groups = heatmap_groups(table)
    charts: List[Chart] = []
    for number, group in enumerate(groups, 1):
        title = "Status by case and release" + (" (%d of %d)" % (number, len(groups)) if len(groups) > 1 else "")
        figure = _heatmap(group, columns, modes, status_of, title)
        files = _save(figure, out, "status-%02d" % number)
        tags = list(dict.fromkeys(tag for tag, _ in group))
        charts.append(Chart(files[0], "%s: %s" % (title, ", ".join(tags)), tuple(files)))
    return charts


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
    """Pass rate (pass / applicable cells) per release: a line per mode and variant."""
    figure = pass_rate_figure(summary)
    if figure is None:
        return []
    return _chart(_save(figure, out, "pass-rate", svg=True), "Pass rate per release")


@_with_settings
def pass_rate_figure(summary: pd.DataFrame) -> Optional[Any]:
    """The pass-rate chart's figure, or None when no pass rate is known."""
    data = summary.dropna(subset=["pass_rate"])
    if data.empty:
        return None
    # Where a release ran under several Pythons, the newest stands for it (as in transitions).
    data = data.assign(_python=store.rank(data["python"].astype(object))).sort_values("_python", kind="stable")
    data = data.drop_duplicates(["release", "variant", "mode"], keep="last")
    releases = store.ordered(data["release"])
    position = {r: i for i, r in enumerate(releases)}
    figure = _figure(max(6.0, 1.5 + 0.45 * len(releases)), 4.2)
    ax = figure.subplots()
    for (variant, mode), line in data.groupby(["variant", "mode"], sort=True):
        line = line.sort_values("release", key=lambda s: s.map(position))
        xs, ys = _broken_line([position[r] for r in line["release"]], (100 * line["pass_rate"].astype(float)).tolist())
        ax.plot(
            xs,
            ys,
            MODE_STYLE.get(str(mode), ":"),
            marker="o",
            markersize=4,
            label=label("%s, %s" % (mode, variant)),
        )
    ax.set_xticks(range(len(releases)), [label(r) for r in releases], rotation=60, ha="right")
    ax.set_ylim(0, 102)
    ax.set_ylabel("pass rate (% of applicable cells)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Pass rate per release")
    return figure


def _broken_line(xs: List[int], ys: List[float]) -> Tuple[List[float], List[float]]:
    """The points of one variant's line, cut (a NaN point) wherever it would pass over another release's position.

    The release axis interleaves variants (``2.5.0``, ``2.5.0+cpu``, ``2.6.0``): a line
    drawn across such a gap would seem to give a value for the other variant's build.
    """
    out_x: List[float] = []
    out_y: List[float] = []
    for x, y in zip(xs, ys):
        if out_x and x - out_x[-1] > 1:
            out_x.append(math.nan)
            out_y.append(math.nan)
        out_x.append(x)
        out_y.append(y)
    return out_x, out_y


@_with_settings
def export_times(table: pd.DataFrame, out: str) -> List[Chart]:
    """Distribution of median export time per release and mode, for cells that exported (log scale)."""
    done = table[table["status"].isin(["pass", "mismatch"])]
    done = done.assign(export_s=pd.to_numeric(done["export_s"], errors="coerce"))
    done = done[done["export_s"] > 0]
    if done.empty:
        return []
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
            box.set_facecolor("#4c72b0" if mode == "strict" else "#dd8452")
        if boxes["boxes"]:
            boxes["boxes"][0].set_label(mode)
    ax.set_yscale("log")
    ax.set_xticks(range(len(releases)), [label(r) for r in releases], rotation=60, ha="right")
    ax.set_xlim(-0.6, len(releases) - 0.4)
    ax.set_ylabel("export time per cell (s, median of runs)")
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("Export time per release (cells that exported)")
    return _chart(_save(figure, out, "export-time"), "Export time per release")


@_with_settings
def transition_counts(moves: pd.DataFrame, out: str) -> List[Chart]:
    """Regressions and fixes per pair of consecutive releases, all modes and variants together."""
    figure = transitions_figure(moves)
    if figure is None:
        return []
    return _chart(_save(figure, out, "transitions"), "Regressions and fixes per release transition")


@_with_settings
def transitions_figure(moves: pd.DataFrame) -> Optional[Any]:
    """The transition chart's figure, or None when there is no regression or fix."""
    picked = moves[moves["kind"].isin(["regression", "fix"])] if not moves.empty else moves
    if picked.empty:
        return None
    from matplotlib.ticker import MaxNLocator

    pairs = picked.assign(pair=picked["before"].astype(str) + " → " + picked["after"].astype(str))
    order = list(dict.fromkeys(pairs.assign(_after=store.rank(pairs["after"])).sort_values("_after")["pair"]))
    counts = pairs.groupby(["pair", "kind"]).size().unstack(fill_value=0).reindex(order, fill_value=0)
    figure = _figure(max(6.0, 1.5 + 0.55 * len(order)), 4.4)
    ax = figure.subplots()
    for offset, kind, color in ((-0.2, "regression", COLORS["fail"]), (0.2, "fix", COLORS["pass"])):
        values = counts[kind].tolist() if kind in counts.columns else [0] * len(order)
        bars = ax.bar([i + offset for i in range(len(order))], values, width=0.4, color=color, label=KIND_LABELS[kind])
        ax.bar_label(bars, labels=[str(v) if v else "" for v in values], fontsize=7, padding=1)
    ax.set_xticks(range(len(order)), [label(pair) for pair in order], rotation=60, ha="right")
    # Counts of cells: a tick at 0.5 would read as half a cell.
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("cells (case × mode × variant)")
    ax.margins(y=0.12)
    ax.legend(fontsize=8)
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
