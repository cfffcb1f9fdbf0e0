"""Which builds come from a pre-release channel: a nightly, a release candidate. Pure, and light to import.

A build's variant names its channel where it comes from one (``nightly-cpu``, ``test-cu128``,
``rc``: :data:`CHANNELS`), and a nightly's or a candidate's version says so too
(``2.16.0.dev20260115+cpu``, ``2.16.0rc1``). ``check`` asks this before it judges anything, so
that a check of released builds imports no table library.
"""

from __future__ import annotations

from typing import Any, Optional

from packaging.version import InvalidVersion, Version

# The channel words a candidate build's variant starts with (``nightly-cpu``, ``test-cu128``, ``rc``).
CHANNELS = ("nightly", "test", "rc")
# The variant a candidate stands beside where its own names no other.
REFERENCE_VARIANT = "pypi"


def channel_of(variant: Any) -> Optional[str]:
    """The channel a variant names (``nightly`` for ``nightly-cpu``), or None for a release's variant."""
    head = str(variant or "").split("-", 1)[0]
    return head if head in CHANNELS else None


def family(variant: Any) -> str:
    """The variant a candidate's build stands beside: ``cpu`` for ``nightly-cpu``; ``pypi`` for ``rc``."""
    text = str(variant or "")
    if channel_of(text) is None:
        return text
    rest = text.split("-", 1)[1] if "-" in text else ""
    return rest or REFERENCE_VARIANT


def is_candidate(version: Any, variant: Any) -> bool:
    """Whether a build comes from a pre-release channel: by its variant, or by its version."""
    if channel_of(variant) is not None:
        return True
    try:
        parsed = Version(str(version))
    except InvalidVersion:
        return False
    return parsed.is_prerelease or parsed.is_devrelease
