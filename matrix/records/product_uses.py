"""Each product's uses (``matrix.contract.products``: made on one release, used on another), judged once for every
page that shows them: the table, its shares per mode, and what the product's declaration asks to be judged of it.

Pure functions over ``Store.products[product.name]``. A use names the making release (``saved_*``) and the using one
(``torch_version``, ...): every product's table has the saved-program table's shape (:func:`.artifacts.table`, the
latest record winning), ``saved`` labelling the making build and ``loaded`` the using one.

The shares (:func:`shares`) count, per mode and (made-on, used-on) pair, the uses tried (an outcome among the
product's ``tried``), those past each of its ``steps`` (a compile's: compiled, then its package loaded in a fresh
process; where a tried use stopped is its record's ``failed_step``, and a process that died where no step says
counts as stopped at the first), those that passed (matched), and those not tried, by why: never a failure.

A product whose upstream makes a promise (``promised_from``) is judged against it (:class:`.epochs.Promise`, pair
by pair) with its epochs (:func:`.epochs.epochs`); the :class:`Verdict` of a product with a ``promise`` says, pair by
pair, where it is kept, and in which modes uses were tried, so that a mode that did not run is said, not counted.
A product whose page shows its regressions has them judged here too (:mod:`.load_regressions`), once.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, List, Mapping, Optional, Sequence, Set, Tuple

import pandas as pd

from matrix.contract.products import Product
from matrix.contract.schema import MODES, STAGE_MISMATCH
from matrix.records import artifacts, epochs, load_regressions
from matrix.records.epochs import Pair, Promise

# Per using build: what its uses cost, where its records time a compile (records that ran now or were reused alike).
COST_COLUMNS = ["loaded", "compiles", "compile_s_median", "compile_s_max", "load_s_median", "package_mb_median"]


def _no_cost() -> pd.DataFrame:
    return pd.DataFrame({column: pd.Series(dtype=object) for column in COST_COLUMNS})


@dataclass(frozen=True)
class ProductUses(artifacts.Uses):
    """A product's uses in a set of records: the table, the making and using orders, the shares, and what its
    declaration asks to be judged (epochs and promise, cost)."""

    product: Product = field(default=None)  # type: ignore[assignment]
    epochs: Tuple[epochs.Epoch, ...] = ()
    promise: Optional[Promise] = None
    cost: pd.DataFrame = field(default_factory=_no_cost)  # :func:`cost`, where the records time a compile
    # Where its declaration shows them: the regressions between using releases (load_regressions.regressions) and
    # each use they affect (load_regressions.program_regressions); None elsewhere.
    regressions: Optional[pd.DataFrame] = None
    affected: Optional[pd.DataFrame] = None


def judge(product: Product, records: pd.DataFrame) -> ProductUses:
    """The uses of ``product`` in its records (``Store.products[product.name]``)."""
    found, made, used = artifacts.product_table(records, product)
    promised = product.promised_from is not None and not found.empty
    regressed = "regressions" in product.parts
    return ProductUses(
        found, tuple(made), tuple(used), shares(found, product), product,
        tuple(epochs.epochs(found)) if promised else (),
        epochs.promise(found, product, functools.partial(_failure_text, product)) if promised else None,
        cost(found) if "compile_s" in product.keys else _no_cost(),
        load_regressions.regressions(found) if regressed else None,
        load_regressions.program_regressions(found) if regressed else None,
    )  # fmt: skip


def share_columns(product: Product) -> List[str]:
    """The columns of :func:`shares` for ``product``: the pair, the uses past each step, passed of total (those
    tried), those not tried per outcome (``not-applicable`` as ``not_applicable``), and the share."""
    untried = [_column(s) for s in product.statuses if s not in product.tried]
    return ["mode", "saved", "loaded", *product.steps, "passed", "total", *untried, "share"]


def _column(status: str) -> str:
    return status.replace("-", "_")


def reached(row: Mapping[str, Any], product: Product) -> Tuple[bool, ...]:
    """How far one use got: past each of the product's steps, then whether it passed; all False where not tried."""
    status, step = row.get("status"), row.get("failed_step")
    if status not in product.tried:
        return (False,) * (len(product.steps) + 1)
    ran = status in (product.statuses[0], STAGE_MISMATCH)
    past = tuple(
        ran or (isinstance(step, str) and step not in product.steps[: i + 1]) for i in range(len(product.steps))
    )
    return (*past, status == product.statuses[0])


def shares(found: pd.DataFrame, product: Product) -> pd.DataFrame:
    """Per mode, made-on × used-on of a :func:`.artifacts.table` of ``product`` (see the module docstring); ``share``
    = passed / total, NaN where none was tried. Rows in mode, made, used order."""
    columns = share_columns(product)
    flags = pd.DataFrame(
        [reached(row, product) for row in found.to_dict("records")],
        index=found.index, columns=[*product.steps, "passed"], dtype=int,
    )  # fmt: skip
    flags["total"] = found["status"].isin(product.tried).astype(int)
    for status in product.statuses:
        if status not in product.tried:
            flags[_column(status)] = (found["status"] == status).astype(int)
    return artifacts.counts(found, flags, columns)


def untried(row: Mapping[str, Any], product: Product) -> Optional[str]:
    """Why no use of a square of :func:`shares` was tried: its most common outcome not tried (the first in the
    product's order among equals); None where some use was tried or none is recorded."""
    if row["total"]:
        return None
    counted = [(int(row.get(_column(s)) or 0), s) for s in product.statuses if s not in product.tried]
    most = max((n for n, _ in counted), default=0)
    return next((s for n, s in counted if n == most), None) if most else None


def failures(
    found: pd.DataFrame, product: Product, where: Sequence[str] = ("case", "mode", "saved", "loaded")
) -> List[Tuple[artifacts.Failure, List[Tuple[str, ...]]]]:
    """The failures of a :func:`.artifacts.table` grouped as :func:`.artifacts.errors` does (the status with the step
    where a use stopped), the most common first, each with the ``where`` of its rows. A use not tried is no failure."""
    return sorted(artifacts.errors(found, product, where), key=lambda item: -len(item[1]))


def _failure_text(product: Product, rows: pd.DataFrame) -> str:
    return common_failure(rows, product)


def common_failure(rows: pd.DataFrame, product: Product) -> str:
    """The text of the most common of :func:`failures` of ``rows`` ("" where none failed)."""
    found = failures(rows, product)
    return found[0][0].text if found else ""


def cost(found: pd.DataFrame) -> pd.DataFrame:
    """Per using build of a :func:`.artifacts.table`, in version order: the compiles that finished (compiled or
    failed with a time), the median and longest compile in seconds, the median load of a package and its median
    size."""
    if found.empty:
        return _no_cost()
    rows = []
    for label in artifacts.orders(found)[1]:
        mine = found[found["loaded"] == label]
        seconds, loads, sizes = (
            pd.to_numeric(mine[c], errors="coerce").dropna() for c in ("compile_s", "load_s", "package_bytes")
        )
        if seconds.empty:
            continue
        rows.append([
            label, len(seconds), float(seconds.median()), float(seconds.max()),
            float(loads.median()) if not loads.empty else math.nan,
            float(sizes.median()) / 1e6 if not sizes.empty else math.nan,
        ])  # fmt: skip
    return pd.DataFrame(rows, columns=COST_COLUMNS)


@dataclass(frozen=True)
class Verdict:
    """What a product's table says of the promise its declaration names, pair by pair: against upstream's promise
    where it makes one (``promise``), else each (made-on, used-on) pair tried (``pairs``, in making, then using order);
    and the modes its uses were tried in."""

    product: Product
    modes: Tuple[str, ...]
    promise: Optional[Promise] = None
    pairs: Tuple[Pair, ...] = ()


def verdicts(judged: Sequence[ProductUses]) -> Tuple[Verdict, ...]:
    """The verdict of each product with a ``promise`` whose records hold uses, in the declarations' order."""
    found = []
    for uses in judged:
        product = uses.product
        if not product.promise or uses.empty:
            continue
        tried = uses.table.loc[uses.table["status"].isin(product.tried), "mode"]
        modes: Set[str] = set(map(str, tried))
        pairs: Tuple[Pair, ...] = ()
        if uses.promise is None:
            failure = functools.partial(_failure_text, product)
            pairs = tuple(pair for _, pair in epochs.tried_pairs(uses.table, product, failure))
        found.append(Verdict(product, tuple(m for m in MODES if m in modes), uses.promise, pairs))
    return tuple(found)
