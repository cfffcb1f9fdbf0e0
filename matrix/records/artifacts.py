"""Programs saved on one release and loaded on another: the load table, its share counts and reach.

Pure functions over ``Store.loads`` (one row per load record, columns ``schema.LOAD_KEYS``); the table, the
share counts (:func:`counts`) and the failures (:class:`Failure`, :func:`errors`, :func:`common_failure`) serve
every product (``matrix.contract.products``) alike, a product's outcomes and those that tried it its own.

- :func:`table`: one row per (saved-on, loaded-on, case, mode, ``--with`` set), the latest record
  winning by ``schema.recency``, with a short label for each side (``saved``, ``loaded``). A
  program is (saving environment, case, mode, ``with_set``): the same case saved under two
  ``--with`` sets is two programs, never one series.
- :func:`counts`: per mode, saving × loading environment, the sums of flags of the rows (a product's shares:
  :func:`.product_uses.shares`).
- :func:`reach`: per saving environment, where its artifacts load and match, where some or none
  do (with the most common failure), and where loading cannot be tried.

A load *tried* the program when its status has a rank (:func:`tried`): ``not-applicable`` (the
loading release has no ``torch.export.load``) and ``untrusted`` (the program's signature is
missing or wrong, so it was not loaded) say nothing about whether it loads, and are never
counted as a failed load. The load regressions between loading releases: :mod:`.load_regressions`.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract import products
from matrix.contract.products import Product
from matrix.contract.schema import (
    LOAD_REQUIRED,
    MODES,
    STAGE_MISMATCH,
    LoadStatus,
    first_line,
    load_identity,
    load_rank,
    recency,
)
from matrix.records import alike, store

SAVED_ENV = ["saved_torch_version", "saved_variant", "saved_python"]
LOADED_ENV = ["torch_version", "variant", "python"]
# One saved program: its loads on every release are its series.
PROGRAM = [*SAVED_ENV, "case", "mode", "with_set"]


def table(loads: pd.DataFrame, product: Product = products.PROGRAM) -> pd.DataFrame:
    """One row per (saved-on, loaded-on, case, mode, with_set) of a ``product``'s records (``Store.loads`` for
    programs, ``Store.products[product.name]``), the latest record winning; report order.

    Records whose identity is not text, or whose mode or status is not one of the product's, are left out; the
    columns are ``saved`` and ``loaded`` (the making and the using environment's labels), then the product's keys.
    """
    keys, columns = product.keys, ["saved", "loaded", *product.keys]
    if loads.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})
    frame = loads.reindex(columns=list(keys)).astype(object)
    # A record from before --with sets had folders of their own has no with_set: it had none.
    frame["with_set"] = [v if isinstance(v, str) else "" for v in frame["with_set"]]
    text = frame[list(LOAD_REQUIRED)].apply(lambda column: column.map(lambda v: isinstance(v, str))).all(axis=1)
    frame = frame[text & frame["mode"].isin(MODES) & frame["status"].isin(list(product.statuses))]
    if frame.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})
    rows = frame.to_dict("records")
    rows.sort(key=recency)
    latest: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
    for row in rows:
        latest[load_identity(row)] = row
    result = pd.DataFrame(list(latest.values()), columns=list(keys), dtype=object)
    result.insert(0, "loaded", labels(result, LOADED_ENV))
    result.insert(0, "saved", labels(result, SAVED_ENV))
    return _sorted(result)


@dataclass(frozen=True)
class Uses:
    """A product's uses (contract/products.py) in a set of records, judged once for every page that shows them."""

    table: pd.DataFrame  # :func:`table`: one row per (made-on, used-on, case, mode, with_set), "saved" and "loaded"
    made: Tuple[str, ...]  # the making environments' labels, in version order
    used: Tuple[str, ...]  # the using environments' labels, in version order
    shares: pd.DataFrame  # per mode, made × used: of those tried, how many passed

    @property
    def empty(self) -> bool:
        return self.table.empty

    @property
    def orders(self) -> Tuple[List[str], List[str]]:
        """The making and the using labels, as :func:`orders` gives them."""
        return list(self.made), list(self.used)

    def of_case(self, case: str) -> pd.DataFrame:
        """The rows of one case."""
        return self.table[self.table["case"] == case] if not self.table.empty else self.table


def product_table(records: pd.DataFrame, product: Product) -> Tuple[pd.DataFrame, List[str], List[str]]:
    """A product's :func:`table` of its records (``Store.products[product.name]``) and its :func:`orders`."""
    found = table(records, product)
    return (found, *orders(found))


def labels(frame: pd.DataFrame, env: Sequence[str]) -> pd.Series:
    """A short name per row's environment (release, variant, python columns ``env``): the release,
    plus the variant where a release has several, plus the Python where a build ran under several."""
    release, variant, python = (frame[column].astype(str) for column in env)
    label = release.copy()
    several_variants = frame.groupby(env[0])[env[1]].transform("nunique") > 1
    label[several_variants] = label[several_variants] + " " + variant[several_variants]
    several_pythons = frame.groupby([env[0], env[1]])[env[2]].transform("nunique") > 1
    label[several_pythons] = label[several_pythons] + " py" + python[several_pythons]
    return label


def env_order(frame: pd.DataFrame, env: Sequence[str]) -> pd.Series:
    """Each row's environment position: release order, then variant, then Python order."""
    envs = frame[list(env)].drop_duplicates()
    ordered = sorted(
        (tuple(str(v) for v in row) for row in envs.itertuples(index=False, name=None)),
        key=lambda e: (store.release_key(e[0]), e[1], store.release_key(e[2])),
    )
    position = {e: i for i, e in enumerate(ordered)}
    rows = frame[list(env)].itertuples(index=False, name=None)
    return pd.Series([position[tuple(str(v) for v in row)] for row in rows], index=frame.index, dtype="int64")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    keyed = frame.assign(
        _saved=env_order(frame, SAVED_ENV),
        _loaded=env_order(frame, LOADED_ENV),
        _mode=frame["mode"].map({m: i for i, m in enumerate(MODES)}),
    )
    keyed = keyed.sort_values(["_saved", "_loaded", "case", "_mode", "with_set"], kind="stable")
    return keyed.drop(columns=["_saved", "_loaded", "_mode"]).reset_index(drop=True)


def orders(loads: pd.DataFrame) -> Tuple[List[str], List[str]]:
    """The saving and the loading environments' labels of a :func:`table`, each in version order."""

    def labelled(env: Sequence[str], label: str) -> List[str]:
        return list(dict.fromkeys(loads.assign(_o=env_order(loads, env)).sort_values("_o", kind="stable")[label]))

    return (labelled(SAVED_ENV, "saved"), labelled(LOADED_ENV, "loaded")) if not loads.empty else ([], [])


def program_label(row: Mapping[str, Any]) -> str:
    """A row of a case's saved × loaded grid: the saving environment's label, and the program's
    ``--with`` set where it has one (``2.9.1 [packaging>=20]``)."""
    with_set = row.get("with_set")
    return "%s [%s]" % (row["saved"], with_set) if isinstance(with_set, str) and with_set else str(row["saved"])


def program_rows(rows: Sequence[Mapping[str, Any]], saved_order: Sequence[str]) -> List[str]:
    """The :func:`program_label` of ``rows`` in ``saved_order``, each environment's programs without
    a ``--with`` set before those with one."""
    position = {label: i for i, label in enumerate(saved_order)}
    found = {}
    for row in rows:
        found[(position.get(str(row["saved"]), len(position)), str(row.get("with_set") or ""))] = program_label(row)
    return [found[key] for key in sorted(found)]


def tried(status: Any) -> bool:
    """Whether a load with this status tried the program (see the module docstring)."""
    return load_rank(status) is not None


def failing(found: pd.DataFrame, product: Product = products.PROGRAM) -> pd.Series:
    """Which rows of a ``product``'s :func:`table` tried the product and did not pass (its first status)."""
    return found["status"].isin(product.tried) & (found["status"] != product.statuses[0])


def counts(found: pd.DataFrame, flags: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Per mode, made × used of a :func:`table`: the sum of each of ``flags`` (0 or 1 per row of ``found``) and
    ``share`` = ``passed / total``, NaN where ``total`` is 0; ``columns`` in order, rows in mode, saved, used order.
    """
    if found.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})
    saved_order, loaded_order = orders(found)
    counted = list(flags.columns)
    grouped = found[["mode", "saved", "loaded"]].join(flags).groupby(["mode", "saved", "loaded"], sort=False)
    grouped = grouped[counted].sum().reset_index()
    grouped["share"] = [p / t if t else math.nan for p, t in zip(grouped["passed"], grouped["total"])]
    grouped = grouped.assign(
        _mode=grouped["mode"].map({m: i for i, m in enumerate(MODES)}),
        _saved=grouped["saved"].map({s: i for i, s in enumerate(saved_order)}),
        _loaded=grouped["loaded"].map({s: i for i, s in enumerate(loaded_order)}),
    )
    grouped = grouped.sort_values(["_mode", "_saved", "_loaded"], kind="stable")
    grouped = grouped.drop(columns=["_mode", "_saved", "_loaded"]).reset_index(drop=True)
    for column in counted:
        grouped[column] = grouped[column].astype("int64")
    grouped["share"] = grouped["share"].astype(float)
    return grouped[list(columns)]


@dataclass(frozen=True)
class Failure:
    """What a failing use said: its status (with the step where a compile stopped: ``compile error``, but never
    ``run mismatch``), error class and the first line of its message ("" where none)."""

    status: str
    error_type: str = ""
    message: str = ""

    @property
    def text(self) -> str:
        """The failure in a few words: ``load-error: RuntimeError: Serialized version … does not match …``."""
        return ": ".join(part for part in (self.status, self.error_type, self.message) if part)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Failure:
        status, step, error_type = str(row.get("status")), row.get("failed_step"), row.get("error_type")
        return cls(
            "%s %s" % (step, status) if isinstance(step, str) and status != STAGE_MISMATCH else status,
            error_type if isinstance(error_type, str) else "",
            first_line(row.get("error_message"), limit=None),
        )


@dataclass(frozen=True)
class Partial:
    """A loading environment on which only some of the artifacts it tried load and match."""

    loaded: str
    passed: int
    tried: int


@dataclass(frozen=True)
class Reach:
    """Where the artifacts saved on one environment load and match; loading labels in version order.

    Each loading environment that holds a load of them is in one of ``passing`` (every artifact
    it tried passes), ``partial``, ``failing`` (none passes), ``untried`` (it tried none: no
    ``torch.export.load``) or ``unsigned`` (it tried none: they were untrusted). ``untrusted``
    counts the loads not tried as untrusted, wherever they were.
    """

    saved: str
    artifacts: int  # the (case, mode) pairs saved
    passing: Tuple[str, ...]
    partial: Tuple[Partial, ...]
    failing: Tuple[str, ...]
    untried: Tuple[str, ...]
    # The first failing environment, when the failing ones (two or more) are the newest ones and
    # come after a passing one: the artifacts stopped loading there for good.
    failing_from: Optional[str]
    failing_cause: Optional[Failure]  # the most common failure on the failing environments
    partial_cause: Optional[Failure]  # the most common failure on the partial ones
    unsigned: Tuple[str, ...] = ()
    untrusted: int = 0


def reach(loads: pd.DataFrame) -> List[Reach]:
    """Per saving environment of a :func:`table`, in version order: where its artifacts load and match."""
    if loads.empty:
        return []
    saved_order, loaded_order = orders(loads)
    found = []
    for saved in saved_order:
        mine = loads[loads["saved"] == saved]
        passing: List[str] = []
        partial: List[Partial] = []
        failing: List[str] = []
        untried: List[str] = []
        unsigned: List[str] = []
        for loaded in loaded_order:
            here = mine[mine["loaded"] == loaded]
            if here.empty:
                continue
            done = here[here["status"].map(tried).astype(bool)]
            passed = int((done["status"] == "pass").sum())
            if not done.empty and passed == len(done):
                passing.append(loaded)
            elif passed:
                partial.append(Partial(loaded, passed, len(done)))
            elif not done.empty:
                failing.append(loaded)
            elif (here["status"] == LoadStatus.UNTRUSTED.value).any():
                unsigned.append(loaded)
            else:
                untried.append(loaded)
        held = [loaded for loaded in loaded_order if loaded in set(mine["loaded"])]
        for_good = (
            len(failing) > 1
            and bool(passing)
            and held[-len(failing) :] == failing
            and held.index(failing[0]) > held.index(passing[-1])
        )
        found.append(
            Reach(
                saved=saved,
                artifacts=len(mine.drop_duplicates(["case", "mode"])),
                passing=tuple(passing),
                partial=tuple(partial),
                failing=tuple(failing),
                untried=tuple(untried),
                failing_from=failing[0] if for_good else None,
                failing_cause=common_failure(mine[mine["loaded"].isin(failing)]),
                partial_cause=common_failure(mine[mine["loaded"].isin([p.loaded for p in partial])]),
                unsigned=tuple(unsigned),
                untrusted=int((mine["status"] == LoadStatus.UNTRUSTED.value).sum()),
            )
        )
    return found


def common_failure(rows: pd.DataFrame, product: Product = products.PROGRAM) -> Optional[Failure]:
    """The most common failure among ``rows`` (status and error type), with its first message; None if none failed."""
    failed = rows[failing(rows, product)]
    if failed.empty:
        return None
    kinds = failed["error_type"].map(lambda v: v if isinstance(v, str) else "")
    counts = collections.Counter(zip(failed["status"].astype(str), kinds))
    (status, error_type), _ = min(counts.items(), key=lambda item: (-item[1], item[0]))
    first = failed[(failed["status"] == status) & (kinds == error_type)]
    return Failure.of(first.iloc[0].to_dict())


def errors(
    found: pd.DataFrame, product: Product = products.PROGRAM, where: Sequence[str] = ("saved", "loaded")
) -> List[Tuple[Failure, List[Tuple[str, ...]]]]:
    """The failures of a ``product``'s :func:`table` (or part of one) grouped by :class:`Failure`: each with the
    ``where`` columns of its rows ((saved, loaded) pairs), groups in order of first appearance. A use not tried is no
    failure.

    Failures of one status and error class whose messages differ only in their numbers (the schema
    versions of each pair, mostly) are one group, its message merged as :func:`.alike.merged` does."""
    items = []
    for row in found[failing(found, product)].to_dict("records"):
        failure = Failure.of(row)
        items.append(((failure.status, failure.error_type), failure.message, tuple(str(row[c]) for c in where)))
    return [(Failure(kind[0], kind[1], message), pairs) for kind, message, pairs in alike.group(items)]
