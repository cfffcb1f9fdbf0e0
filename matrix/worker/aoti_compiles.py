"""Which saved programs ``load --aoti`` compiles on this release, and the record each compile starts from.

"Exported on X, compiled on Y": on the loading release Y, every selected program saved on an *older* release X
(in version order: ``2.9.1 < 2.10.0.dev20251001 < 2.10.0``; the variant does not matter) is compiled with Y's
AOTInductor and its package loaded in a fresh process (:mod:`.load_job`). A program saved on Y itself
is not: compiling a program on the release that exported it is the aoti stage of ``run``. Nor is one saved on a
newer release, which no user compiles on an older one. A program whose own load fails here is tried and
recorded ``skipped`` by the job, without a compile: a program that cannot be loaded cannot be compiled.

Versions are compared here, in the worker, without ``packaging``: the release numbers, then a pre-release
(``a``, ``b``, ``rc``) and a development build (``.dev``) before the release they lead to, as PEP 440 orders
them; the local tag (``+cpu``) takes no part. A version this cannot read is older than nothing.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from ..contract.layout import Artifact
from ..contract.products import AOTI_FROM

_VERSION = re.compile(r"(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post\d+)?(?:\.dev(\d+))?")
_PHASES = {"a": 0, "b": 1, "rc": 2}
# Where a final release sorts among its own pre-releases and development builds.
_FINAL = (3, 0)
_NO_DEV = float("inf")

Order = Tuple[Tuple[int, ...], Tuple[int, int], float]
# Where a version older() read sorts (never: to_compile keeps only those it reads); typed as one.
_OLDEST: Order = ((), (-1, 0), 0.0)


def release_order(version: str) -> Optional[Order]:
    """A sort key of a torch version in release order (see the module docstring); None where it is not one."""
    found = _VERSION.fullmatch(str(version).split("+", 1)[0].strip())
    if found is None:
        return None
    numbers = [int(n) for n in found.group(1).split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()  # 2.10 == 2.10.0
    phase, pre, dev = found.group(2), found.group(3), found.group(4)
    if phase is not None:
        stage = (_PHASES[phase], int(pre))
    elif dev is not None:
        stage = (-1, 0)  # 2.10.0.dev… comes before 2.10.0a1 and 2.10.0
    else:
        stage = _FINAL
    return tuple(numbers), stage, float(dev) if dev is not None else _NO_DEV


def older(saved: str, loading: str) -> bool:
    """Whether the release ``saved`` comes before ``loading`` (builds of one release are neither)."""
    before, after = release_order(saved), release_order(loading)
    return before is not None and after is not None and before < after


def to_compile(found: List[Artifact], version: str, sources: str = AOTI_FROM[0]) -> List[Artifact]:
    """The artifacts ``load --aoti`` compiles on the release ``version``: those saved on an older one, in order.

    ``sources`` (``--aoti-from``): ``all`` of them, or ``nearest-and-oldest``: those of the newest older release
    found and of the oldest in its epoch (every build of each: a release's builds are one release here). The
    epoch is the serializer's major schema version the programs were saved with: a release loads no program
    saved with another one (5 on 2.3–2.4, 7 on 2.5, 8 from 2.6), so an older epoch's oldest would be tried in
    vain where the epoch's own oldest has programs this release can load. A program whose meta names no schema
    version is in every epoch.
    """
    chosen = [artifact for artifact in found if older(artifact.saved_torch_version, version)]
    if sources == AOTI_FROM[0] or not chosen:
        return chosen
    placed = [(release_order(artifact.saved_torch_version) or _OLDEST, schema_major(artifact)) for artifact in chosen]
    nearest = max(order for order, _ in placed)
    epochs = {major for order, major in placed if order == nearest and major is not None}
    oldest = min(order for order, major in placed if not epochs or major is None or major in epochs)
    return [artifact for artifact, (order, _) in zip(chosen, placed) if order in (nearest, oldest)]


def schema_major(artifact: Artifact) -> Optional[str]:
    """The serializer's major schema version a program was saved with (``8`` of ``8.20``), as its meta says."""
    version = (artifact.meta or {}).get("serializer_version")
    return str(version).split(".", 1)[0] if version else None
