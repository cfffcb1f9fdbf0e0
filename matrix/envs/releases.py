"""The torch release matrix as data: releases, wheel variants, channels and named selections.

The facts live in ``releases.toml`` next to this module. This module only reads them
into the frozen dataclasses of ``builds`` and answers questions about them ("the latest 2.4 patch",
"the releases between 2.5.1 and 2.9.1", "the quick selection", "the aoti selection", "the nightly channel's cpu
index"). It imports only the standard library and ``packaging``, so the noxfile can build
its session list from it wherever nox runs: a channel's word (``nightly``) stays a word
until an environment is installed, when ``channels`` asks the index which build it names.
"""

from __future__ import annotations

import datetime
import functools
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .builds import (
    Build,
    Channel,
    Release,
    ReleaseError,
    Variant,
    channel_word,
    minor_key,
    minor_of,
    python_key,
    version_key,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python < 3.11
    import tomli as tomllib

DATA = Path(__file__).with_name("releases.toml")
DEFAULT_VARIANT = "pypi"
# The words that are neither a release nor a channel, beside the named selections of releases.toml (quick, ...):
# `all` is the latest patch of every series and the list FULL names.
WORDS = ("all", "latest")
FULL = "matrix"
INDEX_VARIABLE = "EXPORT_MATRIX_INDEX_URL_"  # + a channel variant's name (NIGHTLY_CPU): its index


@dataclass(frozen=True)
class Matrix:
    """Every known release (oldest first), the variants and the named selections."""

    releases: Tuple[Release, ...]
    variants: Tuple[Variant, ...]
    selections: Tuple[Tuple[str, Tuple[str, ...]], ...] = field(default=())
    source: str = str(DATA)
    channels: Tuple[Channel, ...] = ()

    def variant(self, name: str) -> Variant:
        """A release variant (``cpu``) or a channel's (``nightly-cpu``)."""
        for variant in (*self.variants, *(v for c in self.channels for v in c.variants)):
            if variant.name == name:
                return variant
        raise ReleaseError(
            "unknown variant %r; known: %s (see %s)" % (name, ", ".join(v.name for v in self.variants), self.source)
        )

    def channel(self, word: str) -> Optional[Channel]:
        """The channel a word names (``nightly``, ``rc``), None for any other word."""
        for channel in self.channels:
            if word in channel.words:
                return channel
        return None

    @property
    def named(self) -> Tuple[str, ...]:
        """The selection words releases.toml names (its ``[selections]`` lists but FULL), in its order."""
        return tuple(name for name, _ in self.selections if name != FULL)

    def known_words(self) -> str:
        """What a selection word can be, for messages."""
        found = [*self.named, *WORDS]
        for channel in self.channels:
            found += [channel.name + (", %s:YYYY-MM-DD" % channel.name if channel.dated else ""), *channel.aliases]
        return "%s, a minor series (2.4), a release (2.4.1) or a build (2.4.1+cpu, nightly+cu130)" % ", ".join(found)

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
        older = [r for r in self.releases if minor_key(r.minor) <= minor_key(minor)]
        model = older[-1] if older else self.releases[0]
        return replace(model, version=version.split("+", 1)[0], minor=minor)

    def resolve(self, spec: str, variant: Optional[str] = None) -> Build:
        """A build from ``2.4`` (its latest patch), ``2.4.1``, ``2.4.1+cpu``, ``latest`` or a channel's word.

        ``variant`` applies when the spec carries no local tag (default: PyPI's build, and a
        channel's first index). A version with a channel's variant (``2.16.0.dev20260115+cpu``,
        ``nightly-cpu``) is that channel's build of it, as records name it.
        """
        spec = spec.strip()
        text, _, tag = spec.partition("+")
        head, colon, date = text.partition(":")
        channel = self.channel(head)
        if channel is not None:
            if tag and variant is not None and channel.variant(tag) != channel.variant(variant):
                raise ReleaseError("%s is a +%s build but --variant %s was asked for" % (spec, tag, variant))
            return self._channel_build(spec, channel, date if colon else None, tag or variant)
        if colon:
            raise ReleaseError("unknown channel %r in %s; known words: %s" % (head, spec, self.known_words()))
        named = self.variant(variant) if variant is not None else None
        if named is not None and named.channel is not None:
            if tag and tag != named.local_tag:
                raise ReleaseError("%s is a +%s build but --variant %s was asked for" % (spec, tag, variant))
            if not re.fullmatch(r"\d+\.\d+\.\d+.*", text):
                raise ReleaseError(
                    "%s: %s is the %s channel's variant; name its builds by the channel's word (%s+%s) or a version"
                    % (spec, named.name, named.channel, named.channel, named.local_tag)
                )
            version_key(text)
            return Build(self.release_like(text), named)
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
                known = ", ".join(sorted({r.minor for r in self.releases}, key=minor_key))
                raise ReleaseError("unknown torch minor series %s; known: %s" % (text, known))
            release = patches[-1]
        else:
            if not re.match(r"\d", text):
                raise ReleaseError("unknown torch selection word %r; known words: %s" % (spec, self.known_words()))
            version_key(text)
            release = self.release(text)
        build = Build(release, chosen)
        if not chosen.builds(release):
            raise ReleaseError(
                "variant %s has no build of torch %s (it covers %s to %s; see %s)"
                % (chosen.name, release.version, chosen.since, chosen.until or "now", self.source)
            )
        return build

    def _channel_build(self, spec: str, channel: Channel, date: Optional[str], variant: Optional[str]) -> Build:
        """The pending build of a channel's word: ``nightly``, ``nightly:2026-01-15+cu130``, ``rc``."""
        day: Optional[datetime.date] = None
        if date is not None:
            if not channel.dated:
                raise ReleaseError(
                    "%s: the %s channel has no dated builds; write %s" % (spec, channel.name, channel.name)
                )
            try:
                day = datetime.date.fromisoformat(date)
            except ValueError:
                raise ReleaseError("%s: a dated %s is %s:YYYY-MM-DD" % (spec, channel.name, channel.name))
        if variant == DEFAULT_VARIANT:
            raise ReleaseError(
                "%s: the %s channel has no PyPI build; name one of its indexes (%s+cpu)"
                % (spec, channel.name, channel.name)
            )
        newest = self.releases[-1]  # a channel's builds are the next release's: its series' facts until known
        word = channel_word(channel.name, day)
        release = replace(newest, version=word)
        try:
            return Build(release, channel.variant(variant))
        except ReleaseError as exc:
            raise ReleaseError("%s: %s" % (spec, exc))

    def build(self, version: str, variant: str) -> Build:
        """The build a session names (``torch``, ``variant``): a release's, or a channel's by its word or version."""
        named = self.variant(variant)
        if named.channel is not None:
            head = version.split(":", 1)[0]
            if head == named.channel:
                return self.resolve(version, named.name)
            return self.resolve("%s+%s" % (version, named.local_tag), named.name)
        return Build(self.release(version), named)

    def pinned(self, build: Build, version: str) -> Build:
        """A channel's build of ``version``, with its release's facts where it is one (a candidate), else the word's."""
        try:
            facts: Optional[Release] = self.release(version.split("+", 1)[0])
        except ReleaseError:
            facts = None
        return build.pinned(version, facts)

    def select(self, words: Iterable[str], variant: Optional[str] = None) -> List[Build]:
        """Builds for selection words: the named selections (``quick``), ``all``, ``latest``, minors, versions,
        ``version+tag``, channels."""
        builds: List[Build] = []
        for word in words:
            for spec in self._expand(word):
                build = self.resolve(spec, None if "+" in spec else variant)
                if build not in builds:
                    builds.append(build)
        return builds

    def _expand(self, word: str) -> List[str]:
        if word in self.named:
            return list(self.selection(word))
        if word == "all":
            return [r.version for r in self.latest_patches()] + list(self.selection(FULL))
        return [word]

    def between(self, good: str, bad: str, variant: Variant, python: Optional[str] = None) -> List[Release]:
        """Every release from ``good`` to ``bad`` (both included) that the variant builds for the Python."""
        if variant.channel is not None:
            raise ReleaseError("%s is the %s channel's variant, not one of releases" % (variant.name, variant.channel))
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


def _table(value: Any, where: str, keys: Optional[Sequence[str]] = None) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ReleaseError("%s must be a table" % where)
    unknown = sorted(set(value) - set(keys)) if keys is not None else []
    if unknown:
        raise ReleaseError("%s: unknown keys %s" % (where, unknown))
    return value


def parse(data: Mapping[str, Any], source: str = "releases.toml") -> Matrix:
    """Build the matrix from the parsed TOML, checking every entry."""
    releases: List[Release] = []
    for number, series in enumerate(data.get("series") or [], 1):
        numbered = "%s: [[series]] #%d" % (source, number)
        minor = _text(_table(series, numbered), "minor", numbered)
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
            pins = _strings(series.get("pins", []), where + ": `pins`")
            releases.append(Release(version, minor, pythons, _text(series, "numpy", where, "numpy"), pins))
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
        _table(table, where, ("index_url", "env", "local_tag", "cuda", "since", "until"))
        url, env = _text(table, "index_url", where), _text(table, "env", where)
        since, tag = _text(table, "since", where, "2.1"), table.get("local_tag")
        variants.append(Variant(name, url, env, tag, bool(table.get("cuda", False)), since, table.get("until")))
    if DEFAULT_VARIANT not in {v.name for v in variants}:
        raise ReleaseError("%s: the %s variant is missing" % (source, DEFAULT_VARIANT))

    selections = data.get("selections") or {}
    matrix = Matrix(
        releases=tuple(releases),
        variants=tuple(variants),
        selections=tuple(
            (name, _strings(entries, "%s: selection %s" % (source, name))) for name, entries in selections.items()
        ),
        source=source,
        channels=_channels(data.get("channels") or {}, variants, source, (*selections, *WORDS)),
    )
    for name in dict.fromkeys(("quick", FULL, *matrix.named)):  # quick and FULL must be there
        for spec in matrix.selection(name):
            try:
                matrix.resolve(spec)
            except ReleaseError as exc:
                raise ReleaseError("%s: selection %s, entry %r: %s" % (source, name, spec, exc))
    return matrix


def _channels(
    data: Mapping[str, Any], variants: Sequence[Variant], source: str, taken_words: Sequence[str]
) -> Tuple[Channel, ...]:
    """The ``[channels.NAME]`` tables: each index's variant named ``NAME-VARIANT``, the first one the default."""
    by_name = {v.name: v for v in variants}
    found: List[Channel] = []
    taken = set(taken_words)
    for name, table in data.items():
        where = "%s: [channels.%s]" % (source, name)
        _table(table, where, ("indexes", "aliases", "dated"))
        aliases = _strings(table.get("aliases", []), where + ": `aliases`")
        for word in (name, *aliases):
            if not re.fullmatch(r"[a-z][a-z0-9_]*", word) or word in taken:
                raise ReleaseError("%s: %r cannot be a channel's word (taken, or not a lowercase name)" % (where, word))
            taken.add(word)
        indexes = table.get("indexes")
        if not isinstance(indexes, dict) or not indexes:
            raise ReleaseError("%s: `indexes` must map variants to index URLs" % where)
        own: List[Variant] = []
        for base_name in indexes:
            base = by_name.get(base_name)
            if base is None or base.local_tag is None:
                known = ", ".join(v.name for v in variants if v.local_tag)
                raise ReleaseError(
                    "%s: %r is not a variant with an index of its own; known: %s" % (where, base_name, known)
                )
            variant_name = "%s-%s" % (name, base_name)
            url = _text(indexes, base_name, where + ": `indexes`")
            env = INDEX_VARIABLE + variant_name.upper().replace("-", "_")
            own.append(replace(base, name=variant_name, index_url=url, env=env, until=None, channel=name))
        found.append(Channel(name, tuple(own), aliases, bool(table.get("dated", False))))
    return tuple(found)


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
