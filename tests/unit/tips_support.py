"""The tooltips of a site case page's releases × releases grids, read from its markup by the rule ``tips.js`` follows:
"MADE on ROW, USED on COLUMN: " and the line of the page's list (or the grid's own) that the square names."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any, Dict, List, Optional, Tuple

Square = Tuple[str, str]  # (row header, column header)


class _Grids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.grids: List[Dict[str, Any]] = []  # each: made, used, heads, squares [(row, column index, index)], said
        self.page: Optional[List[str]] = None
        self._grid: Optional[Dict[str, Any]] = None
        self._cell: Optional[List[str]] = None
        self._row: List[Any] = []
        self._in_tips = False
        self._tips: List[str] = []
        self._after_table: Optional[Dict[str, Any]] = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        found = dict(attrs)
        if tag == "table" and "data-made" in found:
            self._grid = {"made": found["data-made"], "used": found["data-used"], "heads": [], "squares": []}
            self._grid["said"] = None
            self.grids.append(self._grid)
        elif tag == "script" and found.get("class") == "tips":
            self._in_tips, self._tips = True, []
        elif self._grid is not None and tag == "tr":
            self._row = []
        elif self._grid is not None and tag in ("th", "td"):
            self._cell = []
            self._row.append([tag, found.get("data-t"), self._cell])
        if tag != "script":
            self._after_table = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_tips:
            said = json.loads("".join(self._tips))
            if self._after_table is not None:
                self._after_table["said"] = said
            else:
                self.page = said
            self._in_tips = False
        elif self._grid is not None and tag == "tr":
            labels = ["".join(cell[2]) for cell in self._row]
            if all(cell[0] == "th" for cell in self._row):
                self._grid["heads"] = labels
            else:
                for column, (_, index, _) in enumerate(self._row):
                    if index is not None:
                        self._grid["squares"].append((labels[0], self._grid["heads"][column], int(index)))
        elif self._grid is not None and tag in ("th", "td"):
            self._cell = None
        elif tag == "table" and self._grid is not None:
            self._after_table, self._grid = self._grid, None

    def handle_data(self, data: str) -> None:
        if self._in_tips:
            self._tips.append(data)
        elif self._cell is not None:
            self._cell.append(data)


def tooltips(html: str) -> List[Dict[Square, str]]:
    """Each grid's tooltips, by (row, column), in the page's order."""
    parser = _Grids()
    parser.feed(html)
    found = []
    for grid in parser.grids:
        said = grid["said"] if grid["said"] is not None else parser.page
        assert said is not None, "a grid names lines of a list the page lacks"
        found.append(
            {
                (row, column): "%s on %s, %s on %s: %s" % (grid["made"], row, grid["used"], column, said[index])
                for row, column, index in grid["squares"]
            }
        )
    return found


def all_tooltips(html: str) -> List[str]:
    """Every square's tooltip on the page."""
    return [title for grid in tooltips(html) for title in grid.values()]
