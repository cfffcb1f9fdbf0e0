"""The batch engine of ``run`` and ``load``: isolated jobs, resumed, journaled, run side by side.

A command describes its batch (a :class:`Batch`): which items it wants, which are already recorded, how the parent
sets up once torch is imported, the record and job of each item. The engine does the rest, the same way for both:

- resume: items already in the record file are skipped (unless ``--force``);
- the journal: each item is noted before it starts. An item that was started by a runner that died, and has no
  record, ran alone (it killed the runner: recorded as a crash, not run again) or beside others (a suspect: run
  again first, one at a time, so that a second death names one);
- the parent: OpenMP limited before forking, torch imported once, a warm-up where it pays (:mod:`.settings`);
- isolation: ``fork`` (a process per item, forked from the warm parent), ``spawn`` (a fresh interpreter per item)
  or ``inline`` (none, for debugging), one at a time or in lanes (:mod:`.settings`);
- progress, each record finished and flushed as its item ends, and the ``done:`` summary.

A job crosses into the isolated process as a message ``{"job": KIND, "fields": {...}}`` (:mod:`.messages`); the
process rebuilds the job of that kind (the kinds, and what a kind provides, are in :mod:`.jobs`) and calls its
``run()``.

Standard library only (torch is imported when a batch starts), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import uuid
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from ..contract import products, records
from ..contract.faults import harness_fault
from ..contract.schema import Status, now
from .journal import Journal, Key, culprits, interrupted
from .messages import TIME_LIMIT, Message, Result, message
from .progress import Progress, say
from .reuse import ResultCache, machine_dependent, reused
from .scratch import run_folder
from .settings import Settings, backend, fork_safe, prepare_parent


class Options:
    """What a command's options add to its request (``contract.requests``), the first of its bases: the request
    validated before torch is imported, and its seconds (``SECONDS``) as floats; ``contract.options.from_namespace``
    reads one from the command line."""

    SECONDS: Tuple[str, ...] = ("timeout",)  # a class constant: this base is no dataclass

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[misc]
        self.validate()  # type: ignore[attr-defined]
        for name in self.SECONDS:
            object.__setattr__(self, name, float(getattr(self, name)))


@dataclasses.dataclass(frozen=True)
class Item:
    """One thing a batch records: its journal key, the record as far as the parent knows, and its job (None when
    the record is complete without running anything: a case that does not load, a capability the release lacks, a
    damaged artifact)."""

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
        :mod:`.cell_cache`): the record to write first, or None where the cache cannot stand for it."""
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
        """After an item ran and its record is complete: what else its result gives (see CachedCells')."""

    def tally(self, record: Dict[str, Any]) -> str:
        """What a recorded item counts as in the command's summary: its status, after what was done where a
        product's outcomes are not the loads' (``products.tally``: a compile's ``compiled ok``)."""
        return str(products.tally(record))

    def preimport(self, settings: Settings) -> None:
        """Import the items' libraries once in this process, so that each forked item does not.

        A library's import is the same for every item, as torch's is; one whose trial import
        fails is left to each item, which records what happens (see ``Settings.preimports``).
        """
        needed = self.libraries()
        if needed and settings.preimports:
            from ..contract.dependencies import preimport

            imported = preimport(needed)
            if imported:
                say("imported %s once, before forking %ss" % (", ".join(imported), self.noun))


def execute(batch: Batch, settings: Settings, torch_version: str, variant: str) -> Dict[str, int]:
    """Run ``batch`` in the installed torch (``torch_version``, recorded as ``variant``): resume, journal,
    isolate, record. Returns counts per status of what it recorded now."""
    wanted = batch.wanted()
    path = settings.out
    os.makedirs(os.path.dirname(path) or os.curdir, exist_ok=True)
    with Journal(path) as journal:
        done: Set[Key] = set()
        dead: Set[Key] = set()
        suspects: List[Key] = []
        if not settings.force:
            done, warnings = batch.done(path)
            sys.stderr.writelines("warning: %s\n" % warning for warning in warnings)
            started = journal.started()
            killers, suspects = culprits(started, interrupted(started, done, wanted))
            dead = set(killers)
        todo = [key for key in wanted if key not in done]
        # Suspects of a runner's death go first, one at a time: see journal.culprits.
        todo = [k for k in todo if k in set(suspects)] + [k for k in todo if k not in set(suspects)]
        plan = (len(wanted), batch.noun, len(wanted) - len(todo), len(todo) - len(dead), batch.verb, path)
        sys.stderr.write(
            "torch %s (%s): %d %ss, %d already recorded, %d to %s -> %s\n" % ((torch_version, variant) + plan)
        )
        if not todo:
            return {}
        with run_folder():  # the temporary files of every process of the run, removed with it
            return _run(batch, settings, todo, dead, set(suspects), journal)


@dataclasses.dataclass(frozen=True)
class Known:
    """A run answered from the result cache before torch is imported: every item reused (see :func:`_known`)."""

    run_id: str
    first: Optional[Dict[str, Any]]
    items: List[Item]
    cache: ResultCache


def _known(batch: Batch, settings: Settings, todo: List[Key]) -> Optional[Known]:
    """The run, where the result cache answers all of it without torch (the environment's facts an earlier run kept,
    ``known_set_up``, and a result that stands for each item); else None: the run imports torch."""
    run_id = uuid.uuid4().hex[:12]
    first = batch.known_set_up(settings, run_id)
    if first is None or settings.cache is None:
        return None
    cache = ResultCache(settings.cache, batch.noun)
    cache.quiet = True  # a damaged entry is said once, by the run that follows a miss
    answered: List[Item] = []
    kept: List[str] = []
    for item in batch.items(todo):
        # An item without a job is complete already: a case that does not load, a missing capability.
        key, hit = _kept(batch, item, cache) if item.job is not None else (None, item)
        if hit is None:
            return None
        kept += [key] if key else []
        answered.append(hit)
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
    prepare_parent(settings)
    settings = fork_safe(settings)
    server = None
    if batch.follow_ups and settings.forks:
        from .pristine import Server

        # Forked now, with torch imported and nothing else done: before set-up (which may import
        # libraries and examples) and the warm-up (which exports).
        # It imports the items' libraries itself, as a user's process that loads their programs does.
        # One per lane that may run (fewer items may be left to run once results are reused).
        lanes = settings.lanes(len(todo))
        server = Server(settings.memory_mb, batch.libraries() if settings.preimports else [], lanes)
    try:
        return _batch(batch, settings, todo, dead, suspects, journal, server.addresses if server else ())
    finally:
        if server is not None:
            server.stop()


def _batch(
    batch: Batch, settings: Settings, todo: List[Key], dead: Set[Key], suspects: Set[Key], journal: Journal,
    fresh: Sequence[str], known: Optional[Known] = None,
) -> Dict[str, int]:  # fmt: skip
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

        if first:  # a load's known set-up writes nothing first ({})
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


def _kept(batch: Batch, item: Item, cache: ResultCache) -> Tuple[Optional[str], Optional[Item]]:
    """The item's key, and the item complete where the cache holds its result and the batch accepts it (else None)."""
    key = batch.cache_key(item)
    entry = cache.get(key) if key else None
    if entry is None or not batch.reusable(item, entry, cache):
        return key, None
    return key, Item(item.key, item.label, reused(entry, item.record))


def _reuse(batch: Batch, item: Item, cache: ResultCache, keys: Dict[Key, str], explain: bool = False) -> Item:
    """The item complete from the cache (see ``_kept``), or the item itself, its key noted in ``keys``."""
    if item.job is None:
        return item
    key, hit = _kept(batch, item, cache)
    if not key:
        return item
    keys[item.key] = key
    if hit is None:
        cache.misses += 1
        if explain:
            why = batch.explain(item, cache) or ["no entry"]
            sys.stderr.write("cache: %s runs again: %s\n" % (item.label, "; ".join(why)))
        return item
    cache.hits += 1
    cache.touch(key)
    return hit


def _isolated(
    batch: Batch, settings: Settings, items: List[Item], lanes: int, journal: Journal, run_id: str, progress: Progress,
    keep: Callable[[Item], None], fresh: Sequence[str] = (),
) -> None:  # fmt: skip
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
