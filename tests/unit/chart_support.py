"""What the chart tests share: the tables they draw and the checks on what was drawn."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pandas as pd

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
