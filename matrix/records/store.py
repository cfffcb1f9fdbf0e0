"""Record folders loaded into pandas: tables of cells, environments, env-errors and each product's uses.

Reading goes through :mod:`matrix.contract.records`, so a truncated last line becomes a
warning and an unknown schema version is refused. When the same cell (release, variant,
python, ``--with`` set, device, case, mode, run: ``schema.IDENTITY``; a record without ``with_set``
ran without ``--with``, one without ``device`` on the CPU) was recorded more than once, e.g. by a
``--force`` re-run or by overlapping shards, the record that finished last wins; records without ``finished_at``
lose to those with one, and ties go to the record read last (folders in the order given,
files sorted, lines in order).
"""

from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix import parallel
from matrix.contract import products as declared
from matrix.contract import records
from matrix.contract.schema import (
    CELL_KEYS,
    ENV_ERROR_KEYS,
    IDENTITY,
    MODES,
    STATUSES,
    recency,
)
from matrix.envs import releases
from matrix.records import cache, published, record_file
from matrix.records.record_file import RECORD_KEYS, StoreError

# Record sets from this size on are parsed by several processes (see workers_for).
PARALLEL_FROM_BYTES = 16 * 1024 * 1024
MAX_WORKERS = 8


@dataclass(frozen=True)
class Store:
    """The records of one or more folders as tables."""

    # One row per cell identity, columns CELL_KEYS and ``added_packages``: what the dependency set of
    # the cell's run added to torch, {distribution: version} from its environment record (else None).
    cells: pd.DataFrame
    environments: pd.DataFrame  # one row per environment record (one per run invocation)
    env_errors: pd.DataFrame  # the latest env-error of each (torch_version, variant, python)
    warnings: Tuple[str, ...]  # skipped lines and records, in reading order
    superseded: int  # cell records replaced by a later record of the same cell
    files: Tuple[str, ...]  # the record files read
    # Per product (contract/products.py), by its name: every record of its kind as read, columns its keys;
    # records.artifacts.table picks the latest.
    products: Mapping[str, pd.DataFrame] = field(default_factory=lambda: _product_records({}))

    @property
    def loads(self) -> pd.DataFrame:
        """The saved programs' loads (``export-matrix load``)."""
        return self.products[declared.PROGRAM.name]


def release_key(version: str) -> Tuple[int, Any, str]:
    """Sort key for torch versions: the release order of ``releases.version_key``, builds of a release by tag."""
    try:
        return (0, releases.version_key(str(version)), str(version))
    except releases.ReleaseError:
        # Unparseable versions go last, in text order, rather than stopping the report.
        return (1, str(version), str(version))


def ordered(values: Iterable[Any]) -> List[str]:
    """Distinct versions (torch releases or Pythons) in version order."""
    return sorted({str(v) for v in values if v is not None and not _missing(v)}, key=release_key)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def rank(values: pd.Series) -> pd.Series:
    """Each version's position in version order, for sorting frames by release or Python."""
    positions = {v: i for i, v in enumerate(ordered(values.dropna().unique()))}
    return values.map(positions)


def newest_python(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per cell of a build (variant, release, ``--with`` set, case, mode): its newest Python's, which stands
    for the build."""
    ranked = cells.assign(_python=rank(cells["python"].astype(object))).sort_values("_python", kind="stable")
    keys = [key for key in ("variant", "release", "with_set", "case", "mode") if key in cells.columns]
    return ranked.drop_duplicates(keys, keep="last").drop(columns="_python")


def sort_cells(frame: pd.DataFrame, release: str = "torch_version", extra: Sequence[str] = ()) -> pd.DataFrame:
    """Rows in report order: release (version order), variant, python (version order), the ``--with``
    set where the frame has one (none first), then ``extra``."""
    if frame.empty:
        return frame.reset_index(drop=True)
    keyed = frame.assign(_release=rank(frame[release]), _python=rank(frame["python"].astype(object)))
    by = ["_release", "variant", "_python", *(["with_set"] if "with_set" in frame.columns else []), *extra]
    if "mode" in extra:
        # Strict first, as torch.export's default.
        keyed["_mode"] = keyed["mode"].map({m: i for i, m in enumerate(MODES)})
        by = [b if b != "mode" else "_mode" for b in by]
    helpers = [c for c in ("_release", "_python", "_mode") if c in keyed.columns]
    return keyed.sort_values(by, kind="stable").drop(columns=helpers).reset_index(drop=True)


def _record_files(folders: Sequence[str]) -> List[str]:
    files: List[str] = []
    for folder in folders:
        if os.path.isfile(folder):
            files.append(folder)
            continue
        if not os.path.isdir(folder):
            raise StoreError("%s: no such record folder" % folder)
        found = list(records.iter_files(folder))
        if not found and published.is_report(folder):
            # A published report whose records are gone: its tables stand for them.
            found = [os.path.join(folder, published.CELLS)]
        if not found:
            raise StoreError("%s: no *.jsonl record files in this folder" % folder)
        files.extend(found)
    return files


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cycle collector while records are parsed.

    Parsed records are millions of small acyclic containers; left on, the collector
    re-scans all those kept so far again and again, which costs about a third of the
    loading time of a large record set and frees nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def workers_for(files: Sequence[str], workers: Optional[int] = None) -> int:
    """Side processes that parse ``files``: none for small record sets, else one per usable core.

    Parsing is pure Python and CPU-bound, so a second core halves it; starting processes
    only pays off from a few megabytes of records.
    """
    if workers is None:
        cores = parallel.cores()
        # Files whose parse is cached load in a fraction of the time: only the others count.
        fresh = [path for path in files if not cache.is_cached(path, record_file.CODE)] if cores > 1 else []
        big = sum(os.path.getsize(path) for path in fresh) >= PARALLEL_FROM_BYTES
        workers = cores if cores > 1 and big and len(fresh) > 1 else 0
    return max(0, min(workers, len(files), MAX_WORKERS))


def load(folders: Sequence[str], workers: Optional[int] = None) -> Store:
    """Read every record file under ``folders`` (folders or single .jsonl files).

    ``workers``: side processes that parse the files (default: see :func:`workers_for`;
    0 parses them in this process, as does a machine with one usable core). Any number
    gives the same tables.
    """
    if not folders:
        raise StoreError("no record folder given")
    files = _record_files(folders)
    warnings: List[str] = []
    cell_parts: List[pd.DataFrame] = []
    environments: List[Dict[str, Any]] = []
    env_errors: List[Dict[str, Any]] = []
    made: Dict[str, List[Dict[str, Any]]] = {product.name: [] for product in declared.PRODUCTS}
    order = 0
    with _collector_paused(), parallel.pool(workers_for(files, workers)) as side:
        for content in side.map(record_file.cached_read, files):
            warnings.extend(content.warnings)
            environments.extend(content.environments)
            env_errors.extend(content.env_errors)
            for name, rows in content.products.items():
                made[name].extend(rows)
            if content.cells is not None:
                part = content.cells
                part["_order"] = range(order, order + len(part))
                part["_file"] = content.path
                order += len(part)
                cell_parts.append(part)
    cells_frame, superseded = _cells(cell_parts, warnings)
    cells_frame["added_packages"] = _added_packages(cells_frame["run_id"], environments)
    return Store(
        cells=cells_frame,
        environments=_environments(environments),
        env_errors=_env_errors(env_errors),
        warnings=tuple(warnings),
        superseded=superseded,
        files=tuple(files),
        products=_product_records(made),
    )


def _cells(parts: List[pd.DataFrame], warnings: List[str]) -> Tuple[pd.DataFrame, int]:
    if not parts:
        return pd.DataFrame({key: pd.Series(dtype=object) for key in RECORD_KEYS}), 0
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame["run"] = pd.to_numeric(frame["run"], errors="coerce").fillna(0).astype("int64")
    valid = frame[["torch_version", "variant", "python", "case"]].notna().all(axis=1)
    valid &= frame["mode"].isin(MODES) & frame["status"].isin(STATUSES)
    if not valid.all():
        for path, count in frame.loc[~valid, "_file"].value_counts(sort=False).sort_index().items():
            warnings.append(
                "%s: skipped %d cell record(s) without a known status, mode or identity"
                " (torch_version, variant, python, case)" % (path, count)
            )
        frame = frame[valid]
    repeated = frame.duplicated(list(IDENTITY), keep=False)
    superseded = 0
    if repeated.any():
        # Only the re-recorded cells need ordering by finishing time.
        # The same rule as merge: schema.recency over the record's own keys.
        again = frame[repeated]
        columns = [key for key in CELL_KEYS if key in again.columns]
        order = [recency(dict(zip(columns, row))) for row in again[columns].itertuples(index=False, name=None)]
        ranked = sorted(range(len(order)), key=order.__getitem__)
        latest = again.iloc[ranked].drop_duplicates(list(IDENTITY), keep="last")
        superseded = len(again) - len(latest)
        frame = pd.concat([frame[~repeated], latest])
    frame = sort_cells(frame, extra=["case", "mode", "run"])
    return frame.drop(columns=["_order", "_file"]), superseded


def _added_packages(run_ids: pd.Series, environments: List[Dict[str, Any]]) -> List[Optional[Dict[str, str]]]:
    """Per cell, the packages its run's environment record lists as added to torch (None without any).

    A cell and the environment record that opened its run share the ``run_id``; a cell
    recorded without running (a set the resolver refused) has no such record.
    """
    added: Dict[str, Dict[str, str]] = {}
    for row in environments:
        packages = row.get("added_packages")
        if isinstance(row.get("run_id"), str) and isinstance(packages, dict) and packages:
            added[row["run_id"]] = {str(name): str(version) for name, version in sorted(packages.items())}
    return [added.get(run_id) if isinstance(run_id, str) else None for run_id in run_ids]


def _environments(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    keys = sorted({key for row in rows for key in row} | {"torch_version", "variant", "python", "started_at"})
    frame = _frame(rows, keys)
    return sort_cells(frame, extra=["started_at"]) if rows else frame


def _product_records(made: Mapping[str, List[Dict[str, Any]]]) -> Dict[str, pd.DataFrame]:
    """Per product, its records as read, one row each, columns its keys (missing keys as None)."""
    return {product.name: _frame(made.get(product.name, []), product.keys) for product in declared.PRODUCTS}


def _frame(rows: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> pd.DataFrame:
    """Records as a table of ``keys`` (missing keys as None), every column of Python objects."""
    return pd.DataFrame({key: [row.get(key) for row in rows] for key in keys}, dtype=object)


def _env_errors(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    frame = _frame(rows, ENV_ERROR_KEYS)
    if frame.empty:
        return frame
    frame = frame.dropna(subset=["torch_version"])
    frame = frame.assign(
        variant=frame["variant"].fillna(""),
        python=frame["python"].fillna(""),
        dependency_set=frame["dependency_set"].fillna(""),  # "": the base environment, torch alone
    )
    # A failed install retried later leaves several env-errors; the latest says what is wrong now.
    frame = frame.assign(_finished=frame["finished_at"].map(lambda v: v if isinstance(v, str) else ""))
    frame = frame.sort_values("_finished", kind="stable").drop_duplicates(
        ["torch_version", "variant", "python", "dependency_set"], keep="last"
    )
    return sort_cells(frame.drop(columns=["_finished"]))
