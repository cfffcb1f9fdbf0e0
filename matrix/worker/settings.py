"""How a batch runs: the options ``run`` and ``load`` share, and what follows from them: the parent's set-up, and the
backend that runs the jobs (an isolation of :mod:`.isolate`, one job at a time or in lanes, each job's follow-ups)."""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Iterable, Iterator, Optional, Sequence, Tuple

from ..contract import resources
from ..contract.requests import WARM_UP_FROM, batch_choices
from . import gpu
from .jobs import merge, work
from .messages import FOLLOW_UP, TIME_LIMIT, Message, Result
from .progress import say

# What an item may take when --max-memory is 0 (no limit), for sizing parallel lanes.
DEFAULT_ITEM_MB = 4096
# 0: each forked item imports its case's libraries itself (benchmarks/dependency_sets.py compares both).
PREIMPORT_VARIABLE = "EXPORT_MATRIX_PREIMPORT"


def default_isolation() -> str:
    return "fork" if hasattr(os, "fork") else "spawn"


@dataclasses.dataclass(frozen=True)
class Settings:
    """How a batch runs: the options ``run`` and ``load`` share."""

    out: str  # the record file
    timeout: float
    max_memory: int = 8192
    isolation: Optional[str] = None
    jobs: int = 0
    force: bool = False
    progress: str = "auto"
    warm_up: str = "auto"
    device: str = "cpu"
    cache: Optional[str] = None  # the result cache's folder (matrix/worker/reuse.py); None: off
    explain_cache: bool = False  # say why each item with a key ran again instead of being reused

    def __post_init__(self) -> None:
        batch_choices(self.isolation, self.progress, self.warm_up)

    @property
    def isolation_name(self) -> str:
        return self.isolation or default_isolation()

    @property
    def forks(self) -> bool:
        return self.isolation_name == "fork"

    @property
    def preimports(self) -> bool:
        """Whether forked items start with their libraries imported by the process they fork from."""
        return self.forks and os.environ.get(PREIMPORT_VARIABLE, "1") != "0"

    @property
    def memory_mb(self) -> Optional[int]:
        """The address space an isolated item may add; none on CUDA, whose driver maps far more than it uses."""
        return None if self.device == "cuda" else (self.max_memory or None)

    def lanes(self, items: int) -> int:
        """Items run at once: as asked, else the usable cores, as many as memory holds at --max-memory each."""
        if self.isolation_name == "inline" or items < 1:
            return 1  # no isolation: nothing to run side by side
        lanes = resources.jobs(self.jobs or None, self.max_memory or DEFAULT_ITEM_MB)
        if self.device != "cpu" and not self.jobs:  # and as many as the GPU's free memory holds
            lanes = min(lanes, gpu.lanes(gpu.facts(), lanes))
        return min(items, lanes)

    def warms_up(self, items: int) -> bool:
        """Whether a warm-up in the parent pays for itself: only over enough forked (or inline) items."""
        if self.isolation_name == "spawn" or self.warm_up == "never":
            return False
        return self.warm_up == "always" or items >= WARM_UP_FROM


def fork_safe(settings: Settings) -> Settings:
    """``settings``, or spawn isolation where this process holds a CUDA context: no job is forked from it then.

    The runner itself never initialises CUDA before forking (:mod:`.gpu`); a library or a user's
    ``sitecustomize`` may. A job forked from such a process would fail at its first CUDA call for
    the runner's fault, so the run goes on in fresh interpreters, and says so once.
    """
    reason = gpu.initialised() if settings.forks else None
    if not reason:
        return settings
    gpu.say_once(
        "warning: %s, so no process forked from it can use CUDA: the rest of this run starts each job in"
        " a fresh interpreter (as --isolation spawn does, slower)" % reason
    )
    return dataclasses.replace(settings, isolation="spawn")


def prepare_parent(settings: Settings) -> None:
    """The process items fork from: OpenMP limited to one thread where they fork on the CPU, torch imported once."""
    if settings.forks and settings.device == "cpu":
        # A forked child deadlocks in OpenMP once the parent has used its thread pool.
        os.environ["OMP_NUM_THREADS"] = "1"
    from .environment import installed_torch_version

    say("importing torch %s..." % installed_torch_version())
    import torch

    if settings.forks and settings.device == "cpu":
        torch.set_num_threads(1)


class Serial:
    """One isolation backend running items one after another, behind the same interface as lanes."""

    def __init__(self, isolation: Any) -> None:
        self.isolation = isolation

    def run(self, jobs: Iterable[Tuple[Any, Message]], timeout: float) -> Iterator[Tuple[Any, Result]]:
        for key, job in jobs:  # read lazily: the next item is noted as started only when it starts
            yield key, self.isolation.run(job, timeout)

    def close(self) -> None:
        self.isolation.close()


class FollowUps:
    """An isolation that runs, after an item, the follow-up its result asks for (see :mod:`.messages`).

    The follow-up runs in ``fresh``: a process that never exported (:mod:`.pristine`), so that
    a cell's saved program is loaded as a user's fresh process would load it, not where tracing
    has set things up. Item and follow-up are one unit for the journal and progress.
    """

    def __init__(self, isolation: Any, fresh: Optional[Any] = None) -> None:
        self.isolation = isolation
        self.fresh = fresh or isolation

    def run(self, job: Message, timeout: float) -> Result:
        result = self.isolation.run(job, job.get(TIME_LIMIT) or timeout)
        follow = result.pop(FOLLOW_UP, None) if isinstance(result, dict) else None
        if not follow:
            return result
        for one in follow if isinstance(follow, list) else [follow]:  # each in a fresh process of its own
            started = time.perf_counter()
            second = self.fresh.run(one["message"], timeout)
            second.setdefault("total_s", round(time.perf_counter() - started, 6))
            merge(one["merge"], result, second, one)
        return result

    def close(self) -> None:
        self.isolation.close()


def _isolation(settings: Settings, fresh: Optional[str] = None) -> Any:
    from . import isolate

    name = settings.isolation_name
    if name == "spawn":  # a fresh interpreter per job: fresh for follow-ups too
        return FollowUps(isolate.SpawnIsolation(settings.memory_mb))
    if name == "inline":  # no isolation at all (debugging): follow-ups run in this process too
        return FollowUps(isolate.InlineIsolation(work))
    if fresh is None:
        return FollowUps(isolate.ForkIsolation(work, settings.memory_mb))
    from .pristine import Client

    return FollowUps(isolate.ForkIsolation(work, settings.memory_mb), Client(fresh))


def backend(settings: Settings, lanes: int, fresh: Sequence[str] = ()) -> Any:
    """The items' backend: ``run(pairs, timeout)`` yields ``(key, result)``; ``close()`` ends it.

    ``fresh``: the addresses of a :class:`.pristine.Server` where follow-ups run (fork isolation): lane i uses
    the i-th (modulo their number), so that a lane's fresh loads wait for no other lane's.
    """

    def made(index: int) -> Any:
        return _isolation(settings, fresh[index % len(fresh)] if fresh else None)

    if lanes > 1:
        from .lanes import Lanes

        return Lanes(made, lanes)
    return Serial(made(0))
