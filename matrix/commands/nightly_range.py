"""The nightlies a bisection searches: the builds a channel's index holds from the good end to the bad one.

``--bad nightly`` is the index's newest nightly, ``--bad nightly:DATE`` that day's (or the last one before it).
``--good nightly:DATE`` is that day's nightly (or the first one after it). ``--good RELEASE`` (2.15, 2.15.0)
starts at the first nightly after the release's branch cut: when a release branches off, main's version moves
to the next minor series, so the first nightly after the cut of 2.15 is the oldest one numbered 2.16 or later.
The index keeps 60 to 90 days: where it holds no nightly of the release's own series any more, the cut has
left it, and the search starts from its oldest nightly, saying so.
"""

from __future__ import annotations

import datetime
import shlex
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from packaging.version import Version

from ..contract.errors import UserError
from ..envs import channels, pythons, releases
from ..envs.builds import Build, Release, channel_word
from ..envs.channels import ChannelUnavailable, Offer

UPSTREAM = "https://github.com/pytorch/pytorch"


class NightlyRangeError(UserError):
    """Ends of a nightly bisection that cannot be used (an unknown word or day, --bad before --good, no index)."""


@dataclass(frozen=True)
class NightlyRange:
    """The nightlies to search, oldest first (the good end first, the bad end last), and how the ends were found."""

    channel: Build  # the channel's pending build: its variant, and the facts its nightlies borrow
    nightlies: Tuple[Offer, ...]
    notes: Tuple[str, ...] = ()


def asks_nightlies(matrix: releases.Matrix, bad: Optional[str]) -> bool:
    """Whether ``--bad`` names a dated channel's build (``nightly``, ``nightly:DATE``): a search over its index."""
    channel = matrix.channel((bad or "").partition("+")[0].partition(":")[0])
    return channel is not None and channel.dated


def channel_variant(variant: Optional[str]) -> Optional[str]:
    # The command's default variant is PyPI's, which has no nightly: the channel's first index stands for it.
    return None if variant in (None, releases.DEFAULT_VARIANT) else variant


def ends(matrix: releases.Matrix, good: str, bad: str, variant: Optional[str]) -> Tuple[Build, Union[Build, Release]]:
    """The bad end's pending build and the good end: a dated build of the same channel, or a release."""
    try:
        bad_build = matrix.resolve(bad, channel_variant(variant))
        channel = matrix.channel(bad.partition("+")[0].partition(":")[0])
        assert channel is not None and bad_build.pending
        head = good.partition("+")[0].partition(":")[0]
        if matrix.channel(head) is not None:
            if head not in channel.words:
                raise NightlyRangeError(
                    "--good %s: a nightly bisection's good end is a %s day or a release" % (good, channel.name)
                )
            good_build = matrix.resolve(good, bad_build.variant.name)
            if good_build.date is None:
                raise NightlyRangeError(
                    "--good %s is the newest nightly; give a day (%s:YYYY-MM-DD) or a release (2.15)" % (good, head)
                )
            if bad_build.date is not None and bad_build.date <= good_build.date:
                raise NightlyRangeError("--bad %s must be newer than --good %s" % (bad, good))
            return bad_build, good_build
        return bad_build, matrix.resolve(good.partition("+")[0], None).release
    except releases.ReleaseError as exc:
        raise NightlyRangeError(str(exc))


def choose(offers: Sequence[Offer], bad: Build, good: Union[Build, Release], index: str) -> NightlyRange:
    """The nightlies from the good end to the bad one among ``offers`` (oldest first, one a day): a pure choice."""
    if not offers:
        raise NightlyRangeError("the index %s holds no dated nightly of %s" % (index, bad.label))
    days = [day_of(offer) for offer in offers]
    held = "it holds %s to %s" % (days[0], days[-1])
    notes: List[str] = []
    bad_notes: List[str] = []
    last = len(offers) - 1
    if bad.date is not None:
        if not days[0] <= bad.date <= days[-1]:
            raise NightlyRangeError("--bad %s: no nightly of that day on the index %s; %s" % (bad.label, index, held))
        last = max(i for i, day in enumerate(days) if day <= bad.date)
        if days[last] != bad.date:
            bad_notes.append(
                "no nightly of %s on the index: the bad end is the one before it, %s" % (bad.date, days[last])
            )
    if isinstance(good, Build):
        assert good.date is not None  # ends() refuses an undated good end
        if good.date > days[-1]:
            raise NightlyRangeError("--good %s: no nightly of that day on the index %s; %s" % (good.label, index, held))
        first = min(i for i, day in enumerate(days) if day >= good.date)
        if good.date < days[0]:
            notes.append("%s is no longer on the index (%s): starting from its oldest nightly" % (good.date, held))
        elif days[first] != good.date:
            notes.append(
                "no nightly of %s on the index: the good end is the one after it, %s" % (good.date, days[first])
            )
    else:
        first = _after_cut(offers, good, index)
        found = offers[first]
        if first == 0:  # nothing of the release's own series is left to show where the cut was
            notes.append(
                "the index no longer reaches back to %s's branch cut (its oldest nightly, %s of %s, is already"
                " numbered %s or later): starting from it" % (good.version, found.version, days[0], good_next(good))
            )
        else:
            notes.append(
                "%s's branch cut: the first nightly numbered %s or later is %s of %s"
                % (good.version, good_next(good), found.version, days[first])
            )
    if first >= last:
        raise NightlyRangeError(
            "--bad %s is not newer than the good end (%s of %s); %s"
            % (bad.label, offers[first].version, days[first], held)
        )
    return NightlyRange(bad, tuple(offers[first : last + 1]), tuple(notes + bad_notes))


def _series(offer: Offer) -> Tuple[int, int]:
    release = Version(offer.version).release
    return release[0], release[1]


def _next_series(release: Release) -> Tuple[int, int]:
    major, minor = (int(n) for n in release.minor.split(".")[:2])
    return major, minor + 1


def good_next(release: Release) -> str:
    """The series main moves to at the release's branch cut: 2.16 for 2.15.x."""
    return "%d.%d" % _next_series(release)


def _after_cut(offers: Sequence[Offer], release: Release, index: str) -> int:
    """The first nightly numbered past the release's own series, or NightlyRangeError where none is."""
    for i, offer in enumerate(offers):
        if _series(offer) >= _next_series(release):
            return i
    raise NightlyRangeError(
        "--good %s: no nightly on the index %s is past its branch cut (numbered %s or later); the newest is %s"
        % (release.version, index, good_next(release), offers[-1].version)
    )


def find(
    matrix: releases.Matrix, good: str, bad: str, variant: Optional[str], python: Optional[str]
) -> Tuple[NightlyRange, str]:
    """Read the index of ``--bad``'s channel and choose the nightlies between the ends, and the Python they use."""
    bad_build, good_end = ends(matrix, good, bad, variant)
    python = python or pythons.default_python(bad_build.release)
    try:
        offers = channels.nightlies(bad_build, python)
    except ChannelUnavailable as exc:
        raise NightlyRangeError(str(exc))
    return choose(offers, bad_build, good_end, bad_build.variant.index()), python


def compare_link(good: Optional[str], bad: Optional[str]) -> Optional[str]:
    """Upstream's view of the commits from one build's ``torch.version.git_version`` to another's."""
    return "%s/compare/%s...%s" % (UPSTREAM, good, bad) if good and bad else None


def day_of(offer: Offer) -> datetime.date:
    """A listed nightly's day (``channels.nightlies`` lists only dated ones)."""
    assert offer.day is not None
    return offer.day


def bisect_commands(verdicts: Sequence[Any], paths: Mapping[str, str], added: Sequence[str] = ()) -> List[str]:
    """The ``export-matrix bisect`` that finds the nightly that broke each cell a nightly candidate broke.

    ``verdicts`` are ``candidate.Verdict``s, ``paths`` each case's file by its name, ``added`` the ``--with``
    requirements the check used. The bad end is the candidate's own day, so the command gives the same answer
    after a newer nightly; a cell whose status did not change (a stage that stopped working) has no command.
    """
    matrix = releases.default_matrix()
    found: List[str] = []
    for verdict in verdicts:
        try:
            variant = matrix.variant(verdict.variant)
        except releases.ReleaseError:
            continue
        channel = matrix.channel(variant.channel or "")
        day = Offer(verdict.candidate, "").day
        if channel is None or not channel.dated or day is None:
            continue  # a release candidate: nothing to bisect over
        for cell in verdict.broken:
            if cell.get("status_before") == cell.get("status_after") or cell.get("case") not in paths:
                continue
            words = ["export-matrix", "bisect", paths[cell["case"]], "--good", verdict.reference.partition("+")[0]]
            words += ["--bad", channel_word(channel.name, day), "--mode", str(cell["mode"])]
            words += ["--variant", str(variant.local_tag)] + [w for r in added for w in ("--with", r)]
            command = " ".join(shlex.quote(word) for word in words)
            if command not in found:
                found.append(command)
    return found
