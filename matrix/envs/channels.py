"""A channel's index: the torch builds it offers here, and the one a channel's word names today.

A channel (``[channels]`` in releases.toml) is an index that changes under its URL: ``nightly``
is the newest build there now, ``nightly:2026-01-15`` that day's build while the index keeps
it (60 to 90 days), ``test`` the candidate of the next release. This module reads the index's
page for torch (PEP 503 HTML or PEP 691 JSON, over http(s) or from a ``file://`` folder, as uv
reads it) and keeps the wheels that install here for the environment's Python; the installer
then installs that exact version from that index. What goes wrong is a ``ChannelUnavailable``
naming the word and the index, which becomes the build's env-error record.
"""

from __future__ import annotations

import datetime
import html.parser
import json
import os
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Optional, Tuple

from packaging import tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from . import pipconfig
from .builds import Build
from .install import InstallError

ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
DEFAULT_TIMEOUT = 30.0


class ChannelUnavailable(InstallError):
    """A channel's index that answers nothing, or has no build of the word for this Python; the message names both."""


@dataclass(frozen=True)
class Offer:
    """One torch build an index offers that installs here."""

    version: str  # 2.16.0.dev20260115+cpu
    file: str  # the wheel's file name
    sha256: Optional[str] = None

    @property
    def wheel(self) -> str:
        """The wheel by name and content: a candidate rebuilt under its version is another wheel."""
        return self.file + ("#sha256=" + self.sha256 if self.sha256 else "")

    @property
    def day(self) -> Optional[datetime.date]:
        """The day of a nightly (its ``.devYYYYMMDD``), None for any other build."""
        dev = Version(self.version).dev
        try:
            return datetime.datetime.strptime(str(dev), "%Y%m%d").date() if dev else None
        except ValueError:
            return None


class _Anchors(html.parser.HTMLParser):
    """The links of a PEP 503 page, less the yanked ones."""

    def __init__(self) -> None:
        super().__init__()
        self.links: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href") and "data-yanked" not in found:
            self.links.append(str(found["href"]))


def files(text: str, content_type: str) -> List[Tuple[str, Optional[str]]]:
    """An index page's files: (file name, sha256 where the page gives it)."""
    if content_type.endswith("json"):
        data = json.loads(text)
        entries = data.get("files") if isinstance(data, dict) else None
        return [
            (str(entry["filename"]), (entry.get("hashes") or {}).get("sha256"))
            for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, dict) and entry.get("filename") and not entry.get("yanked")
        ]
    parser = _Anchors()
    parser.feed(text)
    found: List[Tuple[str, Optional[str]]] = []
    for link in parser.links:
        address, _, fragment = link.partition("#")
        name = urllib.parse.unquote(address.rstrip("/").rsplit("/", 1)[-1])
        digest = fragment[len("sha256=") :] if fragment.startswith("sha256=") else None
        found.append((name, digest))
    return found


def page(index: str, timeout: float = DEFAULT_TIMEOUT) -> Tuple[str, str]:
    """The index's page for torch and its content type; a ``file://`` index is a folder of ``<name>/index.html``."""
    url = index.rstrip("/") + "/torch/"
    if url.startswith("file:"):
        path = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
        return (path / "index.html").read_text(encoding="utf-8"), "text/html"
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "torch-export-matrix"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read().decode("utf-8"), response.headers.get_content_type()


def supported(python: str) -> FrozenSet[tags.Tag]:
    """The wheel tags an interpreter of ``python`` (3.12) installs on this machine."""
    version = tuple(int(n) for n in python.split(".")[:2])
    return frozenset([*tags.cpython_tags(python_version=version), *tags.compatible_tags(python_version=version)])


def offers(listed: List[Tuple[str, Optional[str]]], python: str) -> List[Offer]:
    """The torch builds among an index's files that install here for ``python``, newest first, one per version."""
    wanted = supported(python)
    found = {}
    for name, digest in listed:
        if not name.endswith(".whl"):
            continue
        try:
            project, version, _build, wheel_tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if project == "torch" and wheel_tags & wanted and version not in found:
            found[version] = Offer(str(version), name, digest)
    return [found[version] for version in sorted(found, reverse=True)]


def timeout(environ: Mapping[str, str]) -> float:
    """uv's HTTP timeout, else pip's, else 30 seconds."""
    for value in (environ.get("UV_HTTP_TIMEOUT"), pipconfig.current(environ).timeout):
        try:
            if value:
                return float(value)
        except ValueError:
            continue
    return DEFAULT_TIMEOUT


def listing(build: Build, python: str, environ: Optional[Mapping[str, str]] = None) -> List[Offer]:
    """The builds of ``build``'s variant (its local tag) its channel's index offers for ``python``, newest first."""
    environ = os.environ if environ is None else environ
    index = build.variant.index(environ)
    where = "%s (the %s channel's index %s)" % (build.label, build.variant.channel, index)
    try:
        text, content_type = page(index, timeout(environ))
        listed = files(text, content_type)
    except (OSError, ValueError) as error:  # unreachable, refused, not found, not a page of an index
        raise ChannelUnavailable("%s: the index answers nothing: %s" % (where, error))
    wheels = [name for name, _ in listed if name.startswith("torch-") and name.endswith(".whl")]
    if not wheels:
        raise ChannelUnavailable("%s: the index answers nothing: its page for torch lists no wheel" % where)
    tag = build.variant.local_tag
    here = [o for o in offers(listed, python) if Version(o.version).local == tag]
    if not here:
        raise ChannelUnavailable(
            "%s: none of its %d torch wheels is a +%s build for Python %s on this machine"
            % (where, len(wheels), tag, python)
        )
    return here


def nightlies(build: Build, python: str, environ: Optional[Mapping[str, str]] = None) -> List[Offer]:
    """The dated builds the index offers, oldest first, one a day (the day's newest version, as ``offered`` takes)."""
    by_day: Dict[datetime.date, Offer] = {}
    for offer in listing(build, python, environ):
        if offer.day is not None:
            by_day.setdefault(offer.day, offer)
    return [by_day[day] for day in sorted(by_day)]


def offered(build: Build, python: str, environ: Optional[Mapping[str, str]] = None) -> Offer:
    """The build a pending channel build names for ``python`` now: its index's newest, or its day's."""
    here = listing(build, python, environ)
    if build.date is None:
        return here[0]
    days = sorted({o.day for o in here if o.day})
    of_day = [o for o in here if o.day == build.date]
    if not of_day:
        has = "%s to %s" % (days[0], days[-1]) if days else "no dated build"
        where = "%s (the %s channel's index %s)" % (build.label, build.variant.channel, build.variant.index(environ))
        raise ChannelUnavailable(
            "%s: no build of %s for Python %s (the index no longer has it, or never had); it has %s"
            % (where, build.date, python, has)
        )
    return of_day[0]
