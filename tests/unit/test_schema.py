"""The schema shared by the worker and the host: the first line of an error message."""

from __future__ import annotations

import math
from typing import Any, Optional

import pytest

from matrix.contract import schema


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("boom", 500, "boom"),
        ("Serialized version does not match\nTraceback ...\nmore", 500, "Serialized version does not match"),
        ("\n  \n  indented first line  \r\nsecond", 500, "indented first line"),
        ("a\u2028b", 500, "a"),  # every line break Python knows ends the line
        ("x" * 600, 500, "x" * 500),  # cut without a marker: a record keeps what was said
        ("x" * 600, None, "x" * 600),
        ("abcdef", 3, "abc"),
        ("", 500, ""),
        (" \n\t\n", 500, ""),
        (None, 500, ""),
        (math.nan, 500, ""),  # a missing message read back from a table
        (ValueError("not text"), 500, ""),
    ],
)
def test_first_line_is_the_first_non_blank_line_stripped_and_cut(text: Any, limit: Optional[int], expected: str):
    assert schema.first_line(text, limit) == expected


def test_first_line_cuts_at_500_characters_unless_told():
    assert schema.first_line("y" * 501 + "\nz") == "y" * 500
    assert schema.first_line(str(RuntimeError("  lead\nrest"))) == "lead"


def test_a_with_set_is_part_of_a_cells_identity_and_a_missing_one_is_none():
    bare = {"torch_version": "2.9.1", "variant": "pypi", "python": "3.11", "case": "m", "mode": "strict"}
    assert schema.identity(bare) == schema.identity(dict(bare, run=0, with_set=""))
    assert schema.identity(dict(bare, with_set="packaging==23.2")) != schema.identity(
        dict(bare, with_set="packaging==24.1")
    )
    assert "with_set" in schema.CELL_KEYS and set(schema.IDENTITY) <= set(schema.CELL_KEYS)
