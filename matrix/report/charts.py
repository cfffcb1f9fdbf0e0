"""The report's charts (matplotlib, no pyplot state): status heatmaps, pass rate, export time, transitions.

Charts are written byte-stable: no creation date or software stamp in the files and a
fixed SVG id salt, so rebuilding a report from the same records changes nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import pandas as pd

from matrix.records import store

# Rows per heatmap image: more would make the case names unreadably small.
HEATMAP_ROWS = 50
COLORS = {
    "pass": "#2e9e44",
    "mismatch": "#f0a830",
    "fail": "#d62728",
    "crash": "#6b1f3a",
    "timeout": "#8c6bb1",
    "not-applicable": "#c8c8c8",
    "case-error": "#3b7dd8",
}
NO_RECORD_COLOR = "#ffffff"
MODE_STYLE = {"strict": "-", "non-strict": "--"}
# The cell table's columns that status_heatmaps reads: all a process drawing them needs to be sent.
HEATMAP_COLUMNS = ["release", "variant", "python", "case", "mode", "status", "tags"]
_RC: Dict[str, Any] = {"svg.hashsalt": "torch-export-matrix", "svg.fonttype": "path", "font.size": 9}


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


def summary_charts(summary: pd.DataFrame, moves: pd.DataFrame, table: pd.DataFrame, out: str) -> Dict[str, List[Chart]]:
    """The charts of the report's summary sections, by section: pass rate, transitions, export time."""
    return {
        "summary": pass_rate(summary, out),
        "transitions": transition_counts(moves, out),
        "export-time": export_times(table, out),
    }


def _figure(width: float, height: float, constrained: bool = True) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained" if constrained else None)


def _save(figure: Any, out: str, name: str, svg: bool = False) -> List[str]:
    import matplotlib

    os.makedirs(os.path.join(out, "charts"), exist_ok=True)
    written = []
    with matplotlib.rc_context(_RC):  # type: ignore[arg-type]
        png = os.path.join("charts", name + ".png")
        figure.savefig(os.path.join(out, png), format="png", metadata={"Software": None})
        written.append(png)
        if svg:
            path = os.path.join("charts", name + ".svg")
            figure.savefig(os.path.join(out, path), format="svg", metadata={"Date": None, "Creator": None})
            written.append(path)
    return written


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
    modes = [m for m in store.MODES if m in set(frame["mode"])]
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
    left = 0.3 + _CHAR_W * max(len(c) for c in cases)
    right = 0.3 + _CHAR_W * max(len(t) for t, _ in group)
    bottom = 0.95 + _CHAR_W * max(len(c) for c in columns)
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
        ax.set_xticks(range(len(columns)), columns, rotation=90, fontsize=8)
        if index == 0:
            ax.set_yticks(range(len(cases)), cases, fontsize=8)
        else:
            ax.set_yticks([])
        ax.vlines([c + 0.5 for c in range(len(columns) - 1)], -0.5, len(cases) - 0.5, color="white", linewidth=0.6)
        ax.hlines([r + 0.5 for r in range(len(cases) - 1)], -0.5, len(columns) - 0.5, color="white", linewidth=0.6)
        ax.hlines([start - 0.5 for _, start, _ in spans[1:]], -0.5, len(columns) - 0.5, color="black", linewidth=1)
        ax.tick_params(length=2)
        if index == len(modes) - 1:
            for tag, start, end in spans:
                ax.text(len(columns) - 0.2, (start + end) / 2, tag, fontsize=8, va="center", clip_on=False)
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


def pass_rate(summary: pd.DataFrame, out: str) -> List[Chart]:
    """Pass rate (pass / applicable cells) per release: a line per mode and variant."""
    data = summary.dropna(subset=["pass_rate"])
    if data.empty:
        return []
    # Where a release ran under several Pythons, the newest stands for it (as in transitions).
    data = data.assign(_python=store.rank(data["python"].astype(object))).sort_values("_python", kind="stable")
    data = data.drop_duplicates(["release", "variant", "mode"], keep="last")
    releases = store.ordered(data["release"])
    position = {r: i for i, r in enumerate(releases)}
    figure = _figure(max(6.0, 1.5 + 0.45 * len(releases)), 4.2)
    ax = figure.subplots()
    for (variant, mode), line in data.groupby(["variant", "mode"], sort=True):
        line = line.sort_values("release", key=lambda s: s.map(position))
        ax.plot(
            [position[r] for r in line["release"]],
            100 * line["pass_rate"].astype(float),
            MODE_STYLE.get(str(mode), ":"),
            marker="o",
            markersize=4,
            label="%s, %s" % (mode, variant),
        )
    ax.set_xticks(range(len(releases)), releases, rotation=60, ha="right")
    ax.set_ylim(0, 102)
    ax.set_ylabel("pass rate (% of applicable cells)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Pass rate per release")
    return _chart(_save(figure, out, "pass-rate", svg=True), "Pass rate per release")


def export_times(table: pd.DataFrame, out: str) -> List[Chart]:
    """Distribution of median export time per release and mode, for cells that exported (log scale)."""
    done = table[table["status"].isin(["pass", "mismatch"])]
    done = done.assign(export_s=pd.to_numeric(done["export_s"], errors="coerce"))
    done = done[done["export_s"] > 0]
    if done.empty:
        return []
    releases = store.ordered(done["release"])
    modes = [m for m in store.MODES if m in set(done["mode"])]
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
    ax.set_xticks(range(len(releases)), releases, rotation=60, ha="right")
    ax.set_xlim(-0.6, len(releases) - 0.4)
    ax.set_ylabel("export time per cell (s, median of runs)")
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("Export time per release (cells that exported)")
    return _chart(_save(figure, out, "export-time"), "Export time per release")


def transition_counts(moves: pd.DataFrame, out: str) -> List[Chart]:
    """Regressions and fixes per pair of consecutive releases, all modes and variants together."""
    picked = moves[moves["kind"].isin(["regression", "fix"])] if not moves.empty else moves
    if picked.empty:
        return []
    pairs = picked.assign(pair=picked["before"].astype(str) + " → " + picked["after"].astype(str))
    order = list(dict.fromkeys(pairs.assign(_after=store.rank(pairs["after"])).sort_values("_after")["pair"]))
    counts = pairs.groupby(["pair", "kind"]).size().unstack(fill_value=0).reindex(order, fill_value=0)
    figure = _figure(max(6.0, 1.5 + 0.55 * len(order)), 4.4)
    ax = figure.subplots()
    for offset, kind, color in ((-0.2, "regression", COLORS["fail"]), (0.2, "fix", COLORS["pass"])):
        values = counts[kind].tolist() if kind in counts.columns else [0] * len(order)
        bars = ax.bar([i + offset for i in range(len(order))], values, width=0.4, color=color, label=kind + "s")
        ax.bar_label(bars, labels=[str(v) if v else "" for v in values], fontsize=7, padding=1)
    ax.set_xticks(range(len(order)), order, rotation=60, ha="right")
    ax.set_ylabel("cells (case × mode × variant)")
    ax.margins(y=0.12)
    ax.legend(fontsize=8)
    ax.set_title("Regressions and fixes per release transition")
    return _chart(_save(figure, out, "transitions"), "Regressions and fixes per release transition")
