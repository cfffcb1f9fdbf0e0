"""The site's badge: an SVG with the newest release's pass rate, from the template ``assets/badge.svg``."""

from __future__ import annotations

import math
import os
import string

from matrix.report.site.markup import text

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets", "badge.svg")
LABEL = "torch.export"
# Pass rates from these thresholds on get the first colour, then the next; dark enough for white text.
COLOURS = ((90.0, "#1b7f5a"), (70.0, "#a6611a"), (0.0, "#b2182b"))
NO_DATA = "#6e6e6e"


def render(release: str, passed: int, total: int) -> str:
    """The badge: ``torch.export | 2.15.0: 87% pass`` (the rate rounded down), or ``no data``."""
    if total:
        rate = 100.0 * passed / total
        message = "%s: %d%% pass" % (release, math.floor(rate))
        colour = next(colour for threshold, colour in COLOURS if rate >= threshold)
    else:
        message, colour = "no data", NO_DATA
    left, right = width(LABEL), width(message)
    with open(TEMPLATE, encoding="utf-8") as source:
        template = string.Template(source.read())
    return template.substitute(
        label=text(LABEL),
        message=text(message),
        colour=colour,
        width=left + right,
        left=left,
        right=right,
        label_x=left / 2,
        message_x=left + right / 2,
    )


def width(value: str) -> int:
    """Pixels that ``value`` takes in 11 px Verdana (a generous estimate), with 8 px of padding each side."""
    return sum(4 if c in " .:|il1" else 9 if c in "%mwMW" else 7 for c in value) + 16
