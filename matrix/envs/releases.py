"""The torch release matrix as data: releases, wheel variants and named selections.

The facts live in ``releases.toml`` next to this module. This module only reads them
into frozen dataclasses and answers questions about them ("the latest 2.4 patch",
"the releases between 2.5.1 and 2.9.1", "the quick selection"). It imports only the
standard library, so the noxfile can build its session list from it wherever nox runs.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from packaging.version import InvalidVersion, Version

from matrix.contract.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python < 3.11
    import tomli as tomllib

DATA = Path(__file__).with_name("releases.toml")
DEFAULT_VARIANT = "pypi"


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


def _minor_key(minor: str) -> Tuple[int, ...]:
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

    def builds(self, release: Release) -> bool:
        """Whether this variant has builds of the release's minor series."""
        minor = _minor_key(release.minor)
        return minor >= _minor_key(self.since) and (self.until is None or minor <= _minor_key(self.until))

    def index(self, environ: Optional[Mapping[str, str]] = None) -> str:
        """The index to install from: the override variable when set, else the official one."""
        environ = os.environ if environ is None else environ
        return environ.get(self.env) or self.index_url

    def overridden(self, environ: Optional[Mapping[str, str]] = None) -> bool:
        environ = os.environ if environ is None else environ
        return bool(environ.get(self.env))

    @property
    def family(self) -> str:
        """``pypi``, ``cpu`` or ``cuda``: the nox tag that selects the variant."""
        if self.local_tag is None:
            return "pypi"
        return "cuda" if self.cuda else "cpu"


@dataclass(frozen=True)
class Build:
    """A release in one variant: what one torch environment holds."""

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


@dataclass(frozen=True)
class Matrix:
    """Every known release (oldest first), the variants and the named selections."""

    releases: Tuple[Release, ...]
    variants: Tuple[Variant, ...]
    selections: Tuple[Tuple[str, Tuple[str, ...]], ...] = field(default=())
    source: str = str(DATA)

    # --- lookups -----------------------------------------------------------------------------

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise ReleaseError(
            "unknown variant %r; known: %s (see %s)" % (name, ", ".join(v.name for v in self.variants), self.source)
        )

    def variant_for_tag(self, tag: str) -> Variant:
        for variant in self.variants:
            if variant.local_tag == tag:
                return variant
        known = ", ".join(v.local_tag for v in self.variants if v.local_tag)
        raise ReleaseError("unknown local version tag +%s; known: %s" % (tag, known))

    def release(self, version: str) -> Release:
        for release in self.releases:
            if release.version == version:
                return release
        raise ReleaseError(
            "unknown torch release %s; known: %s (add it to %s)"
            % (version, ", ".join(r.version for r in self.releases), self.source)
        )

    def series(self, minor: str) -> List[Release]:
        return [r for r in self.releases if r.minor == minor]

    def latest_patches(self) -> List[Release]:
        """The newest patch of every minor series, oldest series first."""
        latest: Dict[str, Release] = {}
        for release in self.releases:
            latest[release.minor] = release
        return list(latest.values())

    def selection(self, name: str) -> Tuple[str, ...]:
        for key, entries in self.selections:
            if key == name:
                return entries
        raise ReleaseError("no selection %r in %s" % (name, self.source))

    def release_like(self, version: str) -> Release:
        """A release for any version string, known or not (nightlies): unknown ones borrow their series' facts."""
        try:
            return self.release(version.split("+", 1)[0])
        except ReleaseError:
            pass
        minor = minor_of(version)
        older = [r for r in self.releases if _minor_key(r.minor) <= _minor_key(minor)]
        model = older[-1] if older else self.releases[0]
        return Release(version.split("+", 1)[0], minor, model.pythons, model.numpy_pin, model.extra_pins)

    # --- resolving what users write ------------------------------------------------------------

    def resolve(self, spec: str, variant: Optional[str] = None) -> Build:
        """A build from ``2.4`` (its latest patch), ``2.4.1``, ``2.4.1+cpu`` or ``latest``.

        ``variant`` applies when the spec carries no local tag (default: PyPI's build).
        """
        spec = spec.strip()
        text, _, tag = spec.partition("+")
        if tag:
            chosen = self.variant_for_tag(tag)
            if variant is not None and variant != chosen.name:
                raise ReleaseError("%s is a %s build but --variant %s was asked for" % (spec, chosen.name, variant))
        else:
            chosen = self.variant(variant or DEFAULT_VARIANT)
        if text == "latest":
            candidates = [r for r in self.releases if chosen.builds(r)]
            if not candidates:
                raise ReleaseError("variant %s builds none of the known releases" % chosen.name)
            release = candidates[-1]
        elif re.fullmatch(r"\d+\.\d+", text):
            patches = self.series(text)
            if not patches:
                known = ", ".join(sorted({r.minor for r in self.releases}, key=_minor_key))
                raise ReleaseError("unknown torch minor series %s; known: %s" % (text, known))
            release = patches[-1]
        else:
            version_key(text)
            release = self.release(text)
        build = Build(release, chosen)
        if not chosen.builds(release):
            raise ReleaseError(
                "variant %s has no build of torch %s (it covers %s to %s; see %s)"
                % (chosen.name, release.version, chosen.since, chosen.until or "now", self.source)
            )
        return build

    def select(self, words: Iterable[str], variant: Optional[str] = None) -> List[Build]:
        """Builds for selection words: ``quick``, ``all``, ``latest``, minors, versions, ``version+tag``."""
        builds: List[Build] = []
        for word in words:
            for spec in self._expand(word):
                build = self.resolve(spec, None if "+" in spec else variant)
                if build not in builds:
                    builds.append(build)
        return builds

    def _expand(self, word: str) -> List[str]:
        if word == "quick":
            return list(self.selection("quick"))
        if word == "all":
            return [r.version for r in self.latest_patches()] + list(self.selection("matrix"))
        return [word]

    def between(self, good: str, bad: str, variant: Variant, python: Optional[str] = None) -> List[Release]:
        """Every release from ``good`` to ``bad`` (both included) that the variant builds for the Python."""
        low, high = version_key(good), version_key(bad)
        if low >= high:
            raise ReleaseError("--good %s must be older than --bad %s" % (good, bad))
        return [
            r
            for r in self.releases
            if low <= r.key <= high and variant.builds(r) and (python is None or r.supports(python))
        ]


def _strings(value: Any, where: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ReleaseError("%s must be a list of strings" % where)
    return tuple(value)


def _text(table: Mapping[str, Any], key: str, where: str, default: Optional[str] = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise ReleaseError("%s: `%s` must be a non-empty string" % (where, key))
    return value


def parse(data: Mapping[str, Any], source: str = "releases.toml") -> Matrix:
    """Build the matrix from the parsed TOML, checking every entry."""
    releases: List[Release] = []
    for number, series in enumerate(data.get("series") or [], 1):
        where = "%s: [[series]] #%d" % (source, number)
        if not isinstance(series, dict):
            raise ReleaseError("%s must be a table" % where)
        minor = _text(series, "minor", where)
        where = "%s: series %s" % (source, minor)
        if not re.fullmatch(r"\d+\.\d+", minor):
            raise ReleaseError("%s: `minor` must look like 2.4" % where)
        pythons = _strings(series.get("pythons"), where + ": `pythons`")
        for python in pythons:
            python_key(python)
        patches = _strings(series.get("patches"), where + ": `patches`")
        if not patches:
            raise ReleaseError("%s: `patches` is empty" % where)
        for version in patches:
            if minor_of(version) != minor:
                raise ReleaseError("%s: patch %s is not in series %s" % (where, version, minor))
            releases.append(
                Release(
                    version=version,
                    minor=minor,
                    pythons=pythons,
                    numpy_pin=_text(series, "numpy", where, "numpy"),
                    extra_pins=_strings(series.get("pins", []), where + ": `pins`"),
                )
            )
    if not releases:
        raise ReleaseError("%s: no [[series]] tables" % source)
    versions = [r.version for r in releases]
    if len(set(versions)) != len(versions):
        raise ReleaseError("%s: a release is listed twice" % source)
    if [r.key for r in releases] != sorted(r.key for r in releases):
        raise ReleaseError("%s: series and patches must be listed oldest first" % source)

    variants: List[Variant] = []
    for name, table in sorted((data.get("variants") or {}).items(), key=lambda item: item[0] != DEFAULT_VARIANT):
        where = "%s: [variants.%s]" % (source, name)
        if not isinstance(table, dict):
            raise ReleaseError("%s must be a table" % where)
        unknown = sorted(set(table) - {"index_url", "env", "local_tag", "cuda", "since", "until"})
        if unknown:
            raise ReleaseError("%s: unknown keys %s" % (where, unknown))
        variants.append(
            Variant(
                name=name,
                index_url=_text(table, "index_url", where),
                env=_text(table, "env", where),
                local_tag=table.get("local_tag"),
                cuda=bool(table.get("cuda", False)),
                since=_text(table, "since", where, "2.1"),
                until=table.get("until"),
            )
        )
    if DEFAULT_VARIANT not in {v.name for v in variants}:
        raise ReleaseError("%s: the %s variant is missing" % (source, DEFAULT_VARIANT))

    selections = data.get("selections") or {}
    matrix = Matrix(
        releases=tuple(releases),
        variants=tuple(variants),
        selections=tuple(
            (name, _strings(entries, "%s: selection %s" % (source, name)))
            for name, entries in sorted(selections.items())
        ),
        source=source,
    )
    for name in ("quick", "matrix"):
        for spec in matrix.selection(name):
            try:
                matrix.resolve(spec)
            except ReleaseError as exc:
                raise ReleaseError("%s: selection %s, entry %r: %s" % (source, name, spec, exc))
    return matrix


def load(path: Optional[Path] = None) -> Matrix:
    """Read a releases file (default: the one shipped with the package)."""
    path = DATA if path is None else Path(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ReleaseError("cannot read %s: %s" % (path, exc.strerror or exc))
    except tomllib.TOMLDecodeError as exc:
        raise ReleaseError("%s: not valid TOML: %s" % (path, exc))
    return parse(data, str(path))


@functools.cache
def default_matrix() -> Matrix:
    """The packaged release matrix, read once."""
    return load()


def words(text: Optional[str]) -> List[str]:
    """Selection words from a comma- or space-separated string."""
    return [w for w in re.split(r"[,\s]+", text or "") if w]
