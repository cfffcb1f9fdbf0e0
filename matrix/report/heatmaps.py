"""Status heatmaps: a case's status in every release, as images of case groups and one overview for the front page.

Cases are grouped by their primary tag (the first in sorted order) and cut into images of at
most HEATMAP_ROWS cases, keeping a tag's cases together where they fit. The overview shows
every case at once, a narrow column each, with the tags named below.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.schema import MODES
from matrix.records import store
from matrix.report.charts import (
    COLORS,
    NO_RECORD_COLOR,
    Chart,
    label,
    new_figure,
    one_chart,
    settings,
)

# Rows per heatmap image: more would make the case names unreadably small.
HEATMAP_ROWS = 50
# The cell table's columns that status_heatmaps reads: all a process drawing them needs to be sent.
HEATMAP_COLUMNS = ["release", "variant", "python", "with_set", "case", "mode", "status", "tags"]


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
    figures = status_heatmap_figures(table, labels)
    return [c for n, (title, figure) in enumerate(figures, 1) for c in one_chart(figure, out, "status-%02d" % n, title)]


def status_heatmap_figures(table: pd.DataFrame, labels: pd.Series) -> Iterator[Tuple[str, Any]]:
    """Each status heatmap's title (naming its tags) and figure, drawn one at a time as they are asked for."""
    if table.empty:
        return
    columns, modes, coded = _coded(table, labels)
    groups = heatmap_groups(table)
    for number, group in enumerate(groups, 1):
        title = "Status by case and release" + (" (%d of %d)" % (number, len(groups)) if len(groups) > 1 else "")
        with settings():
            figure = _heatmap(group, columns, modes, coded, title)
        tags = list(dict.fromkeys(tag for tag, _ in group))
        yield "%s: %s" % (title, ", ".join(tags)), figure


def _coded(table: pd.DataFrame, labels: pd.Series) -> Tuple[List[str], List[str], Dict[Tuple[str, str, str], int]]:
    """The environments (``labels``) in release order, the modes, and each (case, mode, environment)'s colour in
    :func:`_paint`'s colour map."""
    frame = table.assign(_env=labels.to_numpy())
    envs = list(dict.fromkeys(store.sort_cells(frame, release="release")["_env"]))
    codes = {status: i + 1 for i, status in enumerate(COLORS)}  # 0: no record
    coded = {
        (str(case), str(mode), str(env)): codes.get(status, 0)
        for case, mode, env, status in zip(frame["case"], frame["mode"], frame["_env"], frame["status"])
    }
    return envs, [m for m in MODES if m in set(frame["mode"])], coded


def _paint(ax: Any, values: List[List[int]]) -> None:
    """Squares of :func:`_coded`'s colours: no record, then the statuses'."""
    from matplotlib.colors import ListedColormap

    colormap = ListedColormap([NO_RECORD_COLOR, *COLORS.values()])
    ax.imshow(values, cmap=colormap, vmin=0, vmax=len(COLORS), aspect="auto", interpolation="nearest")


def _legend(figure: Any, columns: int) -> None:
    """The statuses' colours and the no-record square, under the panels."""
    from matplotlib.patches import Patch

    figure.legend(
        handles=[Patch(color=colour, label=status) for status, colour in COLORS.items()]
        + [Patch(facecolor=NO_RECORD_COLOR, edgecolor="#999999", label="no record")],
        loc="lower center",
        ncol=columns,
        frameon=False,
        fontsize=8,
    )


# Sizes in inches; the layout is computed, not searched, because constrained layout over
# hundreds of tick labels costs seconds per image.
_CELL_W, _CELL_H, _CHAR_W = 0.26, 0.19, 0.062


def _heatmap(
    group: Sequence[Tuple[str, str]],
    columns: List[str],
    modes: List[str],
    coded: Dict[Tuple[str, str, str], int],
    title: str,
) -> Any:
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
    figure = new_figure(width, height, constrained=False)
    # Center the panels when the minimum width leaves room.
    left += (width - (left + len(modes) * panel_w + (len(modes) - 1) * gap + right)) / 2
    spans = _tag_spans(group)
    for index, mode in enumerate(modes):
        x = left + index * (panel_w + gap)
        ax = figure.add_axes((x / width, bottom / height, panel_w / width, panel_h / height))
        _paint(ax, [[coded.get((case, mode, col), 0) for col in columns] for case in cases])
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
    _legend(figure, 4)
    figure.suptitle(title, y=1 - 0.2 / height, va="top")
    return figure


OVERVIEW_TITLE = "Status of every case in every release"


def status_overview(table: pd.DataFrame, labels: pd.Series, out: str) -> List[Chart]:
    """The whole status grid in one image for the front page: a column per case, a row per environment and mode."""
    title = OVERVIEW_TITLE + " (the status grid page names each case)"
    return one_chart(overview_figure(table, labels), out, "status-overview", title)


# Sizes in inches: a case's column narrows down to the least width still seen as a stripe.
_COLUMN_W, _ROW_H, _CASES_W, _TAG_CHAR_W = (0.05, 0.22), 0.2, 10.0, 0.055


@settings()
def overview_figure(table: pd.DataFrame, labels: pd.Series) -> Optional[Any]:
    """The overview's figure: a panel per mode, columns grouped by tag (named below), None for no cells."""
    if table.empty:
        return None
    envs, modes, coded = _coded(table, labels)
    group = [member for chunk in heatmap_groups(table, rows=max(1, table["case"].nunique())) for member in chunk]
    cases = [case for _, case in group]
    env_labels = [label(env) for env in envs]
    spans = _tag_spans(group)
    column_w = min(max(_CASES_W / len(cases), _COLUMN_W[0]), _COLUMN_W[1])
    panel_w, panel_h = column_w * len(cases), _ROW_H * len(envs)
    left = 0.4 + _CHAR_W * max(len(e) for e in env_labels)
    tags_h = 0.25 + _TAG_CHAR_W * max(len(label(tag)) for tag, _, _ in spans)
    # A legend on one line where the panels are wide enough, else on two.
    columns = len(COLORS) + 1 if left + panel_w >= 9.0 else -(-(len(COLORS) + 1) // 2)
    top, gap, legend_h = 0.9, 0.45, 0.45 if columns > len(COLORS) else 0.65
    width = max(left + panel_w + 0.4, 6.5)
    height = top + len(modes) * panel_h + (len(modes) - 1) * gap + tags_h + legend_h
    figure = new_figure(width, height, constrained=False)
    # Center the panels when the minimum width leaves room.
    left += (width - (left + panel_w + 0.4)) / 2
    for index, mode in enumerate(modes):
        y = height - top - (index + 1) * panel_h - index * gap
        ax = figure.add_axes((left / width, y / height, panel_w / width, panel_h / height))
        _paint(ax, [[coded.get((case, mode, env), 0) for case in cases] for env in envs])
        ax.set_title(mode, fontsize=9, loc="left")
        ax.set_yticks(range(len(envs)), env_labels, fontsize=8)
        ax.hlines([r + 0.5 for r in range(len(envs) - 1)], -0.5, len(cases) - 0.5, color="white", linewidth=0.8)
        ax.vlines([start - 0.5 for _, start, _ in spans[1:]], -0.5, len(envs) - 0.5, color="black", linewidth=0.8)
        ax.tick_params(length=2)
        if index == len(modes) - 1:
            ax.set_xticks(*_tag_ticks(spans, column_w), rotation=90, fontsize=7)
        else:
            ax.set_xticks([])
    _legend(figure, columns)
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
