"""Where the site's glossary is, as the site's case pages link it: the page :func:`matrix.report.glossary.page`
builds."""

from __future__ import annotations

PAGE = "glossary.html"
