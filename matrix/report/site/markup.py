"""HTML building blocks of the site: escaped record text, JSON for a script element, status marks, the page shell.

Record text reaches a page only through :func:`text` (entities, no control characters) or
:func:`script_json` (JSON whose ``<``, ``>`` and ``&`` are escaped, so that nothing in it
can close the ``<script>`` element it sits in).
"""

from __future__ import annotations

import html
import json
from typing import Any, Iterable, Optional, Sequence, Tuple
from urllib.parse import quote

from matrix.contract.schema import LoadStatus, Status
from matrix.report import markdown as md
from matrix.report.phrases import plain


def text(value: Any) -> str:
    """Record text for inside an HTML element or attribute: entities, no control characters; None and NaN empty."""
    return html.escape(md.plain(plain(value)), quote=True)


def script_json(data: Any) -> str:
    """``data`` as JSON that can sit inside a ``<script>`` element: no ``<``, ``>`` or ``&`` is left to close it."""
    encoded = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return encoded.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def present(value: Any) -> Optional[str]:
    """``value`` where it is non-empty text, else None."""
    return value if isinstance(value, str) and value else None


def selects(prefix: str, menus: Iterable[Tuple[str, str, Sequence[Tuple[str, str]]]]) -> str:
    """A form's filter menus: per (name, label, options), a labelled ``<select id="PREFIX-NAME">`` of its (value,
    text) options."""
    return "".join(
        '<label>%s <select id="%s-%s">%s</select></label>'
        % (label, prefix, name, "".join('<option value="%s">%s</option>' % (text(v), text(t)) for v, t in options))
        for name, label, options in menus
    )


def filter_link(**filters: str) -> str:
    """A link to a filtered view of the front page (``#release=2.5.1%2Bcpu&status=failing``), as an attribute."""
    return text("#" + "&".join("%s=%s" % (k, quote(v, safe="")) for k, v in filters.items()))


def _contrast(colour: str) -> str:
    """Black or white, whichever reads better on ``colour`` (``#rrggbb``)."""
    red, green, blue = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return "#000" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.55 else "#fff"


def status_style() -> str:
    """CSS classes ``s<i>`` (cell status i of STATUSES) and ``l<i>`` (load status i of LOAD_STATUSES)."""
    rules = [".s%d{background:%s;color:%s}" % (i, s.colour, _contrast(s.colour)) for i, s in enumerate(Status)]
    rules += [".l%d{background:%s;color:%s}" % (i, s.colour, _contrast(s.colour)) for i, s in enumerate(LoadStatus)]
    return "".join(rules)


def page(title: str, body: str, up: str) -> str:
    """A whole page: ``up`` is the path from the page's folder to the site's folder (``""`` or ``"../"``)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>%s</title>\n'
        '<link rel="stylesheet" href="%ssite.css">\n<style>%s</style>\n</head>\n<body>\n%s\n</body>\n</html>\n'
        % (text(title), up, status_style(), body)
    )
