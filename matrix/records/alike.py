"""Failure messages that differ only in their numbers, listed as one.

Under a case's saved × loaded grid the same failure shows on many pairs of releases, each with
that pair's schema versions in its message (``Serialized version ['5', '1'] does not match our
current schema version (8, 20).``). Listed one line per distinct message, the few kinds of
failure a reader looks for drown in dozens of lines. Messages of one *shape* (the same text
between their numbers) make one entry instead: a number every message of the entry has is
kept, one that differs shows as ``…``. Each square of a grid keeps its own message in its title.
"""

from __future__ import annotations

import re
from typing import Dict, Hashable, Iterable, List, Sequence, Tuple, TypeVar

# A number in a message: 5, 8.20 (a version written with dots), 173706.
NUMBER = re.compile(r"\d+(?:\.\d+)*")
# What a merged message shows where its messages' numbers differ.
VARIES = "…"

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def shape(message: str) -> Tuple[str, ...]:
    """The text between a message's numbers: messages of one shape differ only in their numbers."""
    return tuple(NUMBER.split(message))


def merged(messages: Sequence[str]) -> str:
    """One text for ``messages`` of one shape: each number kept where all of them have it, else ``…``."""
    if not messages:
        raise ValueError("merged() needs at least one message")
    parts = NUMBER.split(messages[0])
    numbers = [NUMBER.findall(message) for message in messages]
    if any(len(found) != len(numbers[0]) for found in numbers):
        raise ValueError("merged() takes messages of one shape: %r" % (list(messages),))
    text = [parts[0]]
    for slot, between in enumerate(parts[1:]):
        values = {found[slot] for found in numbers}
        text.append(numbers[0][slot] if len(values) == 1 else VARIES)
        text.append(between)
    return "".join(text)


def group(items: Iterable[Tuple[K, str, T]]) -> List[Tuple[K, str, List[T]]]:
    """``items`` of (kind, message, what it is about) grouped by kind and by the message's shape, in order of first
    appearance: each group's kind, its merged message and what its items are about, in their order.

    ``kind`` is what must match exactly besides the shape (a status and an error class, say).
    """
    groups: Dict[Tuple[K, Tuple[str, ...]], Tuple[List[str], List[T]]] = {}
    for kind, message, about in items:
        messages, abouts = groups.setdefault((kind, shape(message)), ([], []))
        messages.append(message)
        abouts.append(about)
    return [(kind, merged(messages), abouts) for (kind, _), (messages, abouts) in groups.items()]


def joined(lines: Iterable[Tuple[str, Sequence[T]]]) -> List[Tuple[str, List[T]]]:
    """Lines as a page shows them (each group's text, cut to the page's length) that read the same made one: their
    items together, in order of first appearance. Two groups of other shapes can read alike once cut."""
    found: Dict[str, List[T]] = {}
    for text, items in lines:
        found.setdefault(text, []).extend(items)
    return list(found.items())
