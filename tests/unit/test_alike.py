import pytest

from matrix.records import alike


def test_messages_of_one_shape_differ_only_in_their_numbers() -> None:
    assert alike.shape("version (8, 20) here") == alike.shape("version (5, 3) here")
    assert alike.shape("version 8.20 here") == alike.shape("version 5 here")  # a dotted version is one number
    assert alike.shape("version (8, 20) here") != alike.shape("version 8 here")
    assert alike.shape("no number") == ("no number",)


def test_a_merged_message_keeps_the_numbers_all_agree_on_and_marks_the_others() -> None:
    messages = ["saved (5, 1), loader (8, 20)", "saved (5, 3), loader (8, 20)", "saved (5, 3), loader (8, 2)"]
    assert alike.merged(messages) == "saved (5, …), loader (8, …)"
    assert alike.merged(["b'8.7' at 3"]) == "b'8.7' at 3"  # one message is itself
    with pytest.raises(ValueError, match="one shape"):
        alike.merged(["a 1", "a 1 2"])
    with pytest.raises(ValueError, match="at least one"):
        alike.merged([])


def test_groups_are_by_kind_and_shape_in_order_of_first_appearance() -> None:
    items = [
        ("load-error", "version 5 does not match 8", "a"),
        ("run-error", "version 5 does not match 8", "b"),  # another kind: its own group
        ("load-error", "got 2 outputs", "c"),
        ("load-error", "version 7 does not match 8", "d"),
    ]
    assert alike.group(items) == [
        ("load-error", "version … does not match 8", ["a", "d"]),
        ("run-error", "version 5 does not match 8", ["b"]),
        ("load-error", "got 2 outputs", ["c"]),
    ]
    assert alike.group([]) == []


def test_lines_that_read_the_same_once_cut_are_joined_in_order_of_first_appearance() -> None:
    lines = [("a long fail…", [1, 2]), ("other", [3]), ("a long fail…", [4])]
    assert alike.joined(lines) == [("a long fail…", [1, 2, 4]), ("other", [3])]
    assert alike.joined([]) == []
