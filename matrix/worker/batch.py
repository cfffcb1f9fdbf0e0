"""The batch engine of ``run`` and ``load``: isolated jobs, resumed, journaled, run side by side.

A command describes its batch (a :class:`Batch`): which items it wants, which are already
recorded, how the parent sets up once torch is imported, the record and job of each item.
The engine does the rest, the same way for both commands:

- resume: items already in the record file are skipped (unless ``--force``);
- the journal: each item is noted before it starts. An item that was started by a runner
  that died, and has no record, ran alone (it killed the runner: recorded as a crash, not
  run again) or beside others (a suspect: run again first, one at a time, so that a second
  death names one);
- the parent: OpenMP limited before forking, torch imported once, a warm-up where it pays;
- isolation: ``fork`` (a process per item, forked from the warm parent), ``spawn`` (a fresh
  interpreter per item) or ``inline`` (none, for debugging), one at a time or in lanes;
- progress, each record finished and flushed as its item ends, and the ``done:`` summary.

A job crosses into the isolated process as a message ``{"job": KIND, "fields": {...}}``
(:mod:`.messages`); the process rebuilds the job of that kind (the kinds, and what a kind
provides, are in :mod:`.jobs`) and calls its ``run()``.

Standard library only (torch is imported when a batch starts), Python 3.8 syntax.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import time
import uuid
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from ..contract import records, resources
from ..contract.faults import harness_fault
from ..contract.requests import WARM_UP_FROM, batch_choices
from ..contract.schema import Status, now
from . import gpu
from .jobs import merge, work
from .journal import Journal, Key, culprits, interrupted
from .messages import FOLLOW_UP, TIME_LIMIT, Message, Result, message
from .progress import Progress, say
from .reuse import ResultCache, machine_dependent, reused
from .scratch import run_folder

# 0: each forked item imports its case's libraries itself (benchmarks/dependency_sets.py compares both).
PREIMPORT_VARIABLE = "EXPORT_MATRIX_PREIMPORT"
# What an item may take when --max-memory is 0 (no limit), for sizing parallel lanes.
DEFAULT_ITEM_MB = 4096


class Terminated(BaseException):
    """SIGTERM reached the runner: raised where it was, so that cleanup runs as the stack unwinds."""


@contextlib.contextmanager
def dies_cleanly() -> Iterator[None]:
    """Within this block, SIGTERM unwinds the runner (its ``finally`` blocks remove what it made), then ends it
    by SIGTERM still, as its parent expects. Processes forked inside keep the default: they die at once."""
    owner = os.getpid()

    def terminated(signum: int, frame: Any) -> None:
        if os.getpid() != owner:  # a forked child that inherited this handler
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


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


@dataclasses.dataclass(frozen=True)
class Item:
    """One thing a batch records: its journal key, the record as far as the parent knows, and its job.

    ``job`` is None when the record is complete without running anything (a case that does
    not load, a capability the release lacks, a damaged artifact).
    """

    key: Key
    label: str  # what progress shows: a cell id, an artifact's path
    record: Dict[str, Any]
    job: Optional[Any] = None
    extra_s: float = 0.0  # what its job may take beyond the batch's --timeout (a compile's own limit)


class Batch:
    """What a command supplies to the engine; ``run`` and ``load`` each subclass it."""

    noun = "item"  # one of what the batch records, for messages: "cell", "artifact"
    verb = "run"  # what the engine does to one: "run", "load"
    doing = "running"
    statuses: Tuple[str, ...] = ()  # the statuses its records may hold, in display order
    record_keys: Tuple[str, ...] = ()  # the keys of its records
    follow_ups = False  # whether its items' results may ask for a follow-up (``FOLLOW_UP``)
    parent_keys: FrozenSet[str] = frozenset()  # record keys the parent sets and a result may not change

    def wanted(self) -> List[Key]:
        """Every item the command selected, in order (before torch is imported)."""
        raise NotImplementedError

    def done(self, path: str) -> Tuple[Set[Key], List[str]]:
        """The items already recorded in ``path``, and warnings about records that could not be read."""
        raise NotImplementedError

    def set_up(self, settings: Settings, run_id: str) -> Optional[Dict[str, Any]]:
        """In the parent, with torch imported: detect what is needed; returns a record to write first, if any."""
        raise NotImplementedError

    def known_set_up(self, settings: Settings, run_id: str) -> Optional[Dict[str, Any]]:
        """``set_up`` without torch, from what the result cache kept of this environment (see
        :mod:`.known`): the record to write first, or None where the cache cannot stand for it."""
        return None

    def items(self, keys: Sequence[Key]) -> List[Item]:
        """The items of ``keys``, each with its record and job (after ``set_up``)."""
        raise NotImplementedError

    def died(self, item: Item) -> None:
        """Fill ``item.record`` for an item that killed the runner in an earlier run."""
        raise NotImplementedError

    def prepare(self, settings: Settings) -> None:
        """In the parent, where items are left to run once results are reused: imports each would pay again."""

    def warm_up(self) -> None:
        """Pay first-use costs in the parent, so that forked items time their own work."""

    def libraries(self) -> List[str]:
        """The requirements beside torch that its items import (known before ``set_up``)."""
        return []

    def cache_key(self, item: Item) -> Optional[str]:
        """The key of everything that decides an item's result (after ``set_up``); None: never reused."""
        return None

    def reusable(self, item: Item, entry: Dict[str, Any], cache: ResultCache) -> bool:
        """Whether a kept result (``entry["record"]``, ``entry["extra"]``) stands for this item here and now."""
        return True

    def cache_extra(self, item: Item, record: Dict[str, Any], cache: ResultCache) -> Optional[Dict[str, Any]]:
        """What to keep beside a result for ``reusable`` to check later; None: the result may not be kept."""
        return {}

    def cache_index(self, item: Item) -> str:
        """A name of the item that does not change with its key (the same cell, whatever changed): under it the
        cache notes its latest key, for :meth:`explain`; "" for none."""
        return ""

    def explain(self, item: Item, cache: ResultCache) -> List[str]:
        """Why an item with a key was not reused (after ``cache_key`` and ``reusable``): what changed."""
        return []

    def finished(self, item: Item, result: Result) -> None:
        """After an item ran and its record is complete: what else its result gives (see RunBatch's)."""

    def tally(self, record: Dict[str, Any]) -> str:
        """What a recorded item counts as in the command's summary: its status (a batch of two kinds may say which)."""
        return str(record["status"])

    def preimport(self, settings: Settings) -> None:
        """Import the items' libraries once in this process, so that each forked item does not.

        A library's import is the same for every item, as torch's is; one whose trial import
        fails is left to each item, which records what happens. ``EXPORT_MATRIX_PREIMPORT=0``
        leaves every import to the items (benchmarks/dependency_sets.py compares both).
        """
        needed = self.libraries()
        if needed and settings.forks and preimporting():
            from ..contract.dependencies import preimport

            imported = preimport(needed)
            if imported:
                say("imported %s once, before forking %ss" % (", ".join(imported), self.noun))


def preimporting() -> bool:
    """Whether forked items start with their libraries imported by the process they fork from."""
    return os.environ.get(PREIMPORT_VARIABLE, "1") != "0"


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


def execute(batch: Batch, settings: Settings, torch_version: str, variant: str) -> Dict[str, int]:
    """Run ``batch`` in the installed torch (``torch_version``, recorded as ``variant``): resume, journal,
    isolate, record. Returns counts per status of what it recorded now."""
    wanted = batch.wanted()
    path = settings.out
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with Journal(path) as journal:
        done: Set[Key] = set()
        dead: Set[Key] = set()
        suspects: List[Key] = []
        if not settings.force:
            done, warnings = batch.done(path)
            for warning in warnings:
                sys.stderr.write("warning: %s\n" % warning)
            started = journal.started()
            killers, suspects = culprits(started, interrupted(started, done, wanted))
            dead = set(killers)
        todo = [key for key in wanted if key not in done]
        # Suspects of a runner's death go first, one at a time: see journal.culprits.
        todo = [k for k in todo if k in set(suspects)] + [k for k in todo if k not in set(suspects)]
        sys.stderr.write(
            "torch %s (%s): %d %ss, %d already recorded, %d to %s -> %s\n"
            % (
                torch_version,
                variant,
                len(wanted),
                batch.noun,
                len(wanted) - len(todo),
                len(todo) - len(dead),
                batch.verb,
                path,
            )
        )
        if not todo:
            return {}
        with run_folder():  # the temporary files of every process of the run, removed with it
            return _run(batch, settings, todo, dead, set(suspects), journal)


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


def _set_up_parent(settings: Settings) -> None:
    if settings.forks and settings.device == "cpu":
        # A forked child deadlocks in OpenMP once the parent has used its thread pool.
        os.environ["OMP_NUM_THREADS"] = "1"
    from .environment import installed_torch_version

    say("importing torch %s..." % installed_torch_version())
    import torch

    if settings.forks and settings.device == "cpu":
        torch.set_num_threads(1)


@dataclasses.dataclass(frozen=True)
class Known:
    """A run answered from the result cache before torch is imported: every item reused (see :func:`_known`)."""

    run_id: str
    first: Optional[Dict[str, Any]]
    items: List[Item]
    cache: ResultCache


def _known(batch: Batch, settings: Settings, todo: List[Key]) -> Optional[Known]:
    """The run, where the result cache answers every item of it without torch: the environment's facts kept by
    an earlier run (``known_set_up``) and a result that stands for each item; else None, and the run imports
    torch and computes every key itself."""
    run_id = uuid.uuid4().hex[:12]
    first = batch.known_set_up(settings, run_id)
    if first is None or settings.cache is None:
        return None
    cache = ResultCache(settings.cache, batch.noun)
    cache.quiet = True  # a damaged entry is said once, by the run that follows a miss
    answered: List[Item] = []
    kept: List[str] = []
    for item in batch.items(todo):
        if item.job is None:  # complete already: a case that does not load, a missing capability
            answered.append(item)
            continue
        key = batch.cache_key(item)
        entry = cache.get(key) if key else None
        if key is None or entry is None or not batch.reusable(item, entry, cache):
            return None
        kept.append(key)
        answered.append(Item(item.key, item.label, reused(entry, item.record)))
    for key in kept:
        cache.touch(key)
    cache.hits, cache.quiet = len(kept), False
    return Known(run_id, first, answered, cache)


def _run(
    batch: Batch, settings: Settings, todo: List[Key], dead: Set[Key], suspects: Set[Key], journal: Journal
) -> Dict[str, int]:
    known = _known(batch, settings, todo) if settings.cache and not dead and not suspects else None
    if known is not None:
        say("every %s known to the result cache: answered without importing torch" % batch.noun)
        return _batch(batch, settings, todo, dead, suspects, journal, (), known)
    _set_up_parent(settings)
    settings = fork_safe(settings)
    server = None
    if batch.follow_ups and settings.forks:
        from .pristine import Server

        # Forked now, with torch imported and nothing else done: before set-up (which may import
        # libraries and examples) and the warm-up (which exports).
        # It imports the items' libraries itself, as a user's process that loads their programs does.
        # One per lane that may run (fewer items may be left to run once results are reused).
        lanes = settings.lanes(len(todo))
        server = Server(settings.memory_mb, batch.libraries() if preimporting() else [], lanes)
    try:
        return _batch(batch, settings, todo, dead, suspects, journal, server.addresses if server else ())
    finally:
        if server is not None:
            server.stop()


def _batch(
    batch: Batch,
    settings: Settings,
    todo: List[Key],
    dead: Set[Key],
    suspects: Set[Key],
    journal: Journal,
    fresh: Sequence[str],
    known: Optional[Known] = None,
) -> Dict[str, int]:
    cache: Optional[ResultCache]
    if known is not None:
        run_id, first, items, cache = known.run_id, known.first, known.items, known.cache
    else:
        run_id = uuid.uuid4().hex[:12]
        first = batch.set_up(settings, run_id)
        items = batch.items(todo)
        cache = ResultCache(settings.cache, batch.noun) if settings.cache else None
    counts: Dict[str, int] = {}
    keys: Dict[Key, str] = {}  # the cache key of each item that may be kept
    with records.Writer(settings.out) as writer:

        def keep(item: Item) -> None:
            record = item.record
            writer.write(record)
            tally = batch.tally(record)
            counts[tally] = counts.get(tally, 0) + 1
            key = keys.get(item.key)
            if cache is not None and key and not record.get("reused_from") and not machine_dependent(record):
                extra = batch.cache_extra(item, record, cache)
                if extra is not None:
                    cache.put(key, record, extra, batch.cache_index(item))

        if first is not None:
            writer.write(first)
        for item in items:
            if item.key in dead:
                batch.died(item)
                item.record["finished_at"] = now()
                sys.stderr.write("crash (the runner died during it in an earlier run): %s\n" % item.label)
                keep(item)
        live = [item for item in items if item.key not in dead]
        if cache is not None:
            if known is None:
                live = [_reuse(batch, item, cache, keys, settings.explain_cache) for item in live]
            if cache.hits:
                say("%d %ss reused from %s (--no-cache runs them)" % (cache.hits, batch.noun, settings.cache))
            cache.note_run(run_id)
        if not live:
            return counts
        progress = Progress(len(live), settings.progress)
        try:
            for item in live:
                if item.job is None:  # complete already: a case that does not load, a missing capability, reused
                    _finish(batch, item, None, time.perf_counter(), progress)
                    keep(item)
            runnable = [item for item in live if item.job is not None]
            if runnable:
                batch.prepare(settings)
            if runnable and settings.warms_up(len(runnable)):
                batch.warm_up()
            settings = fork_safe(settings)  # set-up imported the items' libraries: one may have touched CUDA
            alone = [item for item in runnable if item.key in suspects]
            rest = [item for item in runnable if item.key not in suspects]
            lanes = settings.lanes(len(rest))
            if alone:
                say(
                    "%s %d %ss again, one at a time: the runner died while they ran side by side"
                    % (batch.doing, len(alone), batch.noun)
                )
                _isolated(batch, settings, alone, 1, journal, run_id, progress, keep, fresh)
            if rest:
                if lanes > 1:
                    say("%s %d %ss, %d at a time" % (batch.doing, len(rest), batch.noun, lanes))
                _isolated(batch, settings, rest, lanes, journal, run_id, progress, keep, fresh)
        finally:
            progress.close()
    return counts


def _reuse(batch: Batch, item: Item, cache: ResultCache, keys: Dict[Key, str], explain: bool = False) -> Item:
    """The item itself, or, where the cache holds its result and the batch accepts it, the item complete."""
    if item.job is None:
        return item
    key = batch.cache_key(item)
    if not key:
        return item
    keys[item.key] = key
    entry = cache.get(key)
    if entry is None or not batch.reusable(item, entry, cache):
        cache.misses += 1
        if explain:
            why = batch.explain(item, cache) or ["no entry"]
            sys.stderr.write("cache: %s runs again: %s\n" % (item.label, "; ".join(why)))
        return item
    cache.hits += 1
    cache.touch(key)
    return Item(item.key, item.label, reused(entry, item.record))


def _isolated(
    batch: Batch,
    settings: Settings,
    items: List[Item],
    lanes: int,
    journal: Journal,
    run_id: str,
    progress: Progress,
    keep: Callable[[Item], None],
    fresh: Sequence[str] = (),
) -> None:
    """Run items in isolation, one at a time or in lanes; record each as it ends."""
    runner = backend(settings, lanes, fresh)
    started: Dict[Key, float] = {}

    def hand_out() -> Iterator[Tuple[Item, Message]]:
        for item in items:
            journal.start(item.key, run_id, now(), alone=lanes == 1)
            progress.start(item.label)
            started[item.key] = time.perf_counter()
            sent = message(item.job)
            if item.extra_s:
                sent[TIME_LIMIT] = settings.timeout + item.extra_s
            yield item, sent

    try:
        for item, result in runner.run(hand_out(), settings.timeout):
            _finish(batch, item, result, started[item.key], progress)
            batch.finished(item, result)
            keep(item)
    finally:
        runner.close()


def fill(batch: Batch, record: Dict[str, Any], result: Result) -> None:
    """Put into ``record`` what an item's ``result`` may say: its batch's record keys, not those its parent sets."""
    record.update({k: v for k, v in result.items() if k in batch.record_keys and k not in batch.parent_keys})


def _finish(batch: Batch, item: Item, result: Optional[Result], started: float, progress: Progress) -> None:
    record = item.record
    if result is not None:
        fill(batch, record, result)
    if result is not None or not record.get("reused_from"):  # a reused result keeps the time it was measured in
        record["total_s"] = round(time.perf_counter() - started, 6)
    record["finished_at"] = now()
    if record.get("status") not in batch.statuses:
        record.update(status=Status.CRASH.value, error_message="the %s reported no status" % batch.noun)
    fault = harness_fault(record) if record.get("status") != Status.PASS.value else None
    if fault and Status.HARNESS_ERROR.value in batch.statuses:  # the runner's fault: no evidence about torch
        record["status"] = Status.HARNESS_ERROR.value
        if "reason" in record:
            record["reason"] = fault
    progress.finish(item.label, record["status"], record["total_s"])


def summary(counts: Dict[str, int], statuses: Sequence[str], nothing: str) -> str:
    """The ``done:`` line of a command: counts per status in display order."""
    text = ", ".join("%s %d" % (status, counts[status]) for status in statuses if status in counts)
    return "done: %s" % (text or nothing)
