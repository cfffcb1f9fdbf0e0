"""Status heatmaps: cases grouped by tag, split across images of a readable size."""

from __future__ import annotations

from pathlib import Path

from matrix.records import tables
from matrix.report import heatmaps

from .chart_support import is_png, table


def test_many_cases_are_split_across_images_keeping_tags_together(tmp_path: Path):
    cells = table(cases=120, releases=8)
    groups = heatmaps.heatmap_groups(cells, rows=50)
    assert all(len(g) <= 50 for g in groups)
    assert sorted(case for g in groups for _, case in g) == sorted(set(cells["case"]))
    # A tag that fits in one image is not split across two.
    for tag in {t for g in groups for t, _ in g}:
        holding = [i for i, g in enumerate(groups) if any(t == tag for t, _ in g)]
        size = sum(1 for g in groups for t, _ in g if t == tag)
        if size <= 50:
            assert len(holding) == 1, tag
    written = heatmaps.status_heatmaps(cells, tables.environment_labels(cells), str(tmp_path))
    assert len(written) == len(groups) >= 3
    assert all(is_png(tmp_path / c.path) for c in written)


def test_primary_tag_is_the_first_sorted_tag():
    assert heatmaps.primary_tag(["torch.map", "python.closure"]) == "python.closure"
    assert heatmaps.primary_tag([]) == "untagged"
    assert heatmaps.primary_tag(None) == "untagged"
