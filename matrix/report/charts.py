"""How the report's charts are drawn and written (matplotlib, no pyplot state): the palette, the settings, the files.

The charts themselves live beside this module: :mod:`matrix.report.heatmaps` (status by case
and release) and :mod:`matrix.report.release_charts` (pass rate, export time, transitions);
:mod:`matrix.report.chart_keys` declares each chart group with the tables it is drawn from, and
lets a rebuild keep the charts whose tables did not change.

Every colour comes from Okabe and Ito's colour-blind-safe palette (OKABE_ITO) or is a grey:
the statuses' colours are the schema's, the modes' are MODE_COLORS. A continuous scale (a
share from 0 to 1) is SCALE, cividis, which reads the same to every common colour blindness
and in greyscale.

Charts are written byte-stable: no creation date or software stamp in the files and a
fixed SVG id salt, so rebuilding a report from the same records changes nothing. A PNG is
written with a palette of at most 256 colours (a chart has a few flat colours and their
anti-aliased edges), a quarter of the bytes of matplotlib's true-colour file.

Labels come from the records (case names, tags, releases, variants) and are drawn as
plain text: ``$`` does not start mathtext and TeX is never run, whatever the user's
matplotlib settings say, so a name such as ``$\\macro$`` is shown rather than parsed.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

from matrix.contract.schema import Status
from matrix.report import files as report_files
from matrix.report import markdown as md

# Okabe and Ito's palette: black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple.
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
COLORS = {status.value: status.colour for status in Status}
NO_RECORD_COLOR = "#ffffff"
# The colour map of a continuous scale, and the grey of a square with no value on it.
SCALE = "cividis"
NO_VALUE_COLOR = "#e8e8e8"
MODE_COLORS = {"strict": "#0072B2", "non-strict": "#E69F00"}
_RC: Dict[str, Any] = {
    "svg.hashsalt": "torch-export-matrix",
    "svg.fonttype": "path",
    "font.size": 9,
    "text.parse_math": False,
    "text.usetex": False,
}
# Longest label drawn: a longer case name would widen a heatmap by inches.
LABEL_CHARS = 60


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


@contextlib.contextmanager
def settings() -> Iterator[None]:
    """matplotlib's settings for the charts (:data:`_RC`) while the block runs; ``@settings()`` builds and saves a
    chart under them, as text objects take their settings when created."""
    import matplotlib

    with matplotlib.rc_context(_RC):  # type: ignore[arg-type]
        yield


def new_figure(width: float, height: float, constrained: bool = True) -> Any:
    """A figure of ``width`` by ``height`` inches at 100 dpi, in constrained layout unless told otherwise."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained" if constrained else None)


def save(figure: Any, out: str, name: str, svg: bool = False) -> List[str]:
    """Write ``figure`` as ``charts/<name>.png`` (and ``.svg``) under ``out``; returns the paths in the report."""
    written = []
    with settings():
        png = "charts/%s.png" % name
        drawn = io.BytesIO()
        figure.savefig(drawn, format="png", metadata={"Software": None})
        report_files.write_bytes(out, png, paletted(drawn.getvalue()))  # and the folder, for the SVG too
        written.append(png)
        if svg:
            path = "charts/%s.svg" % name
            figure.savefig(report_files.target(out, path), format="svg", metadata={"Date": None, "Creator": None})
            written.append(path)
    return written


def paletted(png: bytes) -> bytes:
    """The PNG with a palette of its 256 most common colours, exact (a chart's flat colours are its most common),
    each other pixel (an anti-aliased edge) the nearest of them, no dithering; a PNG with transparency as it is."""
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        if image.mode == "RGBA" and int(np.asarray(image.getchannel("A")).min()) < 255:
            return png
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3).astype(np.int32)
    packed = (pixels[:, 0] << 16) | (pixels[:, 1] << 8) | pixels[:, 2]
    keys, index, counts = np.unique(packed, return_inverse=True, return_counts=True)
    colours = np.stack([keys >> 16, (keys >> 8) & 255, keys & 255], axis=1)
    common = colours[np.lexsort((keys, -counts))[:256]]
    # Each distinct colour's nearest common colour (itself where it is one of them).
    nearest = np.argmin(((colours[:, None, :] - common[None, :, :]) ** 2).sum(axis=2), axis=1).astype(np.uint8)
    reduced = Image.fromarray(nearest[index.reshape(-1)].reshape(image.height, image.width), mode="P")
    reduced.putpalette(common.astype(np.uint8).reshape(-1).tolist())
    written = io.BytesIO()
    reduced.save(written, format="png", optimize=True)
    return written.getvalue()


def label(value: object, limit: int = LABEL_CHARS) -> str:
    """Record text as a chart label: no terminal escapes or control characters, cut to ``limit``."""
    text = md.plain(str(value)).replace("\t", " ").replace("\r", " ").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_chart(figure: Optional[Any], out: str, name: str, title: str, svg: bool = False) -> List[Chart]:
    """``figure`` written by :func:`save` as the list a drawing function returns; none where there is no figure."""
    if figure is None:
        return []
    files = save(figure, out, name, svg)
    return [Chart(files[0], title, tuple(files))]
