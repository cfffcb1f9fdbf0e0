"""What one torch environment holds: a release, a wheel variant, a channel's indexes, and the build they make.

Values read from ``releases.toml`` (by :mod:`matrix.envs.releases`), with the version rules they sort and
match by. Standard library and ``packaging`` only, as for the release matrix.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, replace
from typing import Mapping, Optional, Tuple

from packaging.version import InvalidVersion, Version

from matrix.contract.errors import UserError

from . import uvconfig


class ReleaseError(UserError):
    """An unknown release, variant or selection, or a malformed releases.toml; the message says which."""


def version_key(version: str) -> Version:
    """A sort key following PEP 440 (2.10.0 > 2.9.1, nightlies before the release).

    The local tag (``+cpu``) does not take part: builds of one release sort together.
    """
    try:
        return Version(version.split("+", 1)[0])
    except InvalidVersion:
        raise ReleaseError("%r is not a torch version (expected e.g. 2.4.1, 2.4.1+cpu or 2.10.0.dev20251001)" % version)


def minor_of(version: str) -> str:
    """``2.4`` for ``2.4.1+cpu``."""
    version_key(version)  # validates
    return ".".join(version.split("+", 1)[0].split(".")[:2])


def minor_key(minor: str) -> Tuple[int, ...]:
    return tuple(int(n) for n in minor.split("."))


def python_key(python: str) -> Tuple[int, ...]:
    try:
        return tuple(int(n) for n in python.split("."))
    except ValueError:
        raise ReleaseError("%r is not a Python version (expected e.g. 3.11)" % python)


@dataclass(frozen=True)
class Release:
    """One torch release: the Pythons it has wheels for and what must be installed with it."""

    version: str
    minor: str
    pythons: Tuple[str, ...]
    numpy_pin: str = "numpy"
    extra_pins: Tuple[str, ...] = ()

    def supports(self, python: str) -> bool:
        return python in self.pythons

    @property
    def requirements(self) -> Tuple[str, ...]:
        """What to install beside torch."""
        return (self.numpy_pin, *self.extra_pins)

    @property
    def key(self) -> Version:
        return version_key(self.version)


@dataclass(frozen=True)
class Variant:
    """A wheel variant: an index of torch builds (``cpu``, ``cu121``) or PyPI's default build."""

    name: str
    index_url: str
    env: str
    local_tag: Optional[str] = None
    cuda: bool = False
    since: str = "2.1"
    until: Optional[str] = None
    channel: Optional[str] = None  # the channel whose index this is (``nightly-cpu``: nightly); None for releases

    def builds(self, release: Release) -> bool:
        """Whether this variant has builds of the release's minor series."""
        minor = minor_key(release.minor)
        return minor >= minor_key(self.since) and (self.until is None or minor <= minor_key(self.until))

    def index(self, environ: Optional[Mapping[str, str]] = None) -> str:
        """The index to install from: the override variable, else uv's index of this name, else the official one.

        uv's named indexes (``UV_INDEX="nightly-cpu=URL"``, ``[[index]]`` in uv.toml) count for the
        variants of an index of their own; PyPI's stays the default index, whatever uv names.
        """
        environ = os.environ if environ is None else environ
        return environ.get(self.env) or self._uv_index(environ) or self.index_url

    def overridden(self, environ: Optional[Mapping[str, str]] = None) -> bool:
        environ = os.environ if environ is None else environ
        return bool(environ.get(self.env) or self._uv_index(environ))

    def _uv_index(self, environ: Mapping[str, str]) -> Optional[str]:
        if self.local_tag is None:
            return None
        return uvconfig.named_indexes(environ).get(self.name)

    @property
    def family(self) -> str:
        """``pypi``, ``cpu`` or ``cuda``: the nox tag that selects the variant."""
        if self.local_tag is None:
            return "pypi"
        return "cuda" if self.cuda else "cpu"


@dataclass(frozen=True)
class Channel:
    """Builds before they are releases (nightlies, release candidates): one index per variant.

    Its variants are its own (``nightly-cpu``, ``test-cu130``): a candidate carries the final version
    number, so 2.7.1 from the test index and 2.7.1 from PyPI differ only by variant in records,
    environments, the result cache and reports.
    """

    name: str
    variants: Tuple[Variant, ...]  # the default first
    aliases: Tuple[str, ...] = ()
    dated: bool = False  # whether ``name:YYYY-MM-DD`` picks the build of a day (nightlies)

    @property
    def words(self) -> Tuple[str, ...]:
        return (self.name, *self.aliases)

    def variant(self, name: Optional[str] = None) -> Variant:
        """The channel's variant of a release variant (``cpu``) or its own name (``nightly-cpu``); None: the first."""
        if name is None:
            return self.variants[0]
        for variant in self.variants:
            if name in (variant.name, variant.name[len(self.name) + 1 :]):
                return variant
        known = ", ".join(v.name[len(self.name) + 1 :] for v in self.variants)
        raise ReleaseError("the %s channel has no %s index; it has: %s" % (self.name, name, known))


def channel_word(channel: str, date: Optional[datetime.date] = None) -> str:
    """``nightly``, or ``nightly:2026-01-15`` for a day's build: the version a channel's build has until installed."""
    return channel if date is None else "%s:%s" % (channel, date.isoformat())


@dataclass(frozen=True)
class Build:
    """A release in one variant: what one torch environment holds.

    A channel's build (``nightly+cpu``) is *pending* until an environment is installed: its release
    is the channel's word with the newest series' facts, and ``pinned`` makes it the build the
    channel's index offers (``2.16.0.dev20260115+cpu``).
    """

    release: Release
    variant: Variant

    @property
    def torch_version(self) -> str:
        """The version torch reports: ``2.4.1`` for PyPI's build, ``2.4.1+cpu`` for the cpu index's."""
        tag = self.variant.local_tag
        return self.release.version + ("+" + tag if tag else "")

    @property
    def label(self) -> str:
        return self.torch_version

    @property
    def pending(self) -> bool:
        """Whether this is a channel's word (``nightly``), not yet a version its index offers."""
        channel = self.variant.channel
        return channel is not None and self.release.version.split(":", 1)[0] == channel

    @property
    def date(self) -> Optional[datetime.date]:
        """The day of a dated nightly (``nightly:2026-01-15``), None for any other build."""
        if not self.pending or ":" not in self.release.version:
            return None
        return datetime.date.fromisoformat(self.release.version.split(":", 1)[1])

    def pinned(self, version: str, facts: Optional[Release] = None) -> Build:
        """The channel's build of ``version`` (``2.16.0.dev20260115+cpu``), with ``facts`` or the word's pins.

        The local tag must be the variant's: the environment is named, and checked, by it.
        """
        public, _, tag = version.partition("+")
        if (tag or None) != self.variant.local_tag:
            raise ReleaseError(
                "%s is not a build of the %s variant (+%s)" % (version, self.variant.name, self.variant.local_tag)
            )
        model = facts or self.release
        return Build(replace(model, version=public, minor=minor_of(public)), self.variant)
