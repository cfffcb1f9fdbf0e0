"""The site's filters over the front page's table of regressions (a widget: only the site has them).

The table is :func:`matrix.report.transition_page.changes_section`'s, built once for both forms; this widget adds
the menus (``into``: the newer release of a transition; ``change``: one kind of regression), the count of rows kept,
a button that shows the rest of a long table, and each row's filter keys, in the table's row order, for
``assets/site.js``. The filters live in the page's address like the grid's.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

from matrix.records import transitions
from matrix.records.transitions import Step
from matrix.report import transition_page
from matrix.report.site.markup import script_json, selects

NAME = "change-filters"
# The rows shown at a time; a button shows the rest of what the filters keep.
PAGE = 5


def widget(steps: Sequence[Step]) -> Dict[str, str]:
    """The widget's HTML by name, for ``publish.write``'s ``widgets`` of the front page ({} without a transition)."""
    if not steps:
        return {}
    froms: Dict[str, List[str]] = {}
    for s in steps:
        froms.setdefault(s.after, []).append(s.before)
    options = [("", "every transition")] + [(i, "into %s (from %s)" % (i, " or ".join(f))) for i, f in froms.items()]
    kinds = [("", "every regression")] + [(k, transition_page.COUNTED[k]) for k in transitions.REGRESSIONS]
    rows = transition_page.regressions(steps)  # the front page's table: its fixes are on the transition pages
    keys = [[str(m["after"]), "regressions %s" % m["kind"]] for m in rows]
    menus = selects("c", (("into", "transition", options), ("change", "change", kinds)))
    return {
        NAME: '<form id="change-filters" class="filters" onsubmit="return false">%s</form>'
        '<p id="c-count" aria-live="polite">%d changes</p><p><button type="button" id="c-more" hidden>Show all</button>'
        '</p><script type="application/json" id="change-keys">%s</script>'
        % (menus, len(rows), script_json({"page": PAGE, "rows": keys}))
    }
