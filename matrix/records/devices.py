"""Where cells ran (``--device``), kept apart: a device is never a transition, and one build on two devices is compared.

The same case on one build gives other results on the CPU and on a GPU for reasons of the device, not of torch's
release: a case that builds CPU tensors inside ``forward`` cannot run on CUDA, a shape guard may differ. So the
report judges the cells of one device, its *main* device: the CPU wherever any cell ran there, else the device its
cells ran on. Transitions, verdicts, epochs and the grid see only those cells. Each build that also ran on another
device is compared with its own cells on the main device, cell by cell (same Python, ``--with`` set, case and
mode): the cells whose status differs, or whose graphs differ (hashes of one fingerprint scheme), each with both
errors. A build that ran only on another device has nothing to be compared with; its cells are counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import pandas as pd

COLUMN = "device"
# Where a record without a device ran: the worker's default, and every record written before ``--device``.
DEFAULT = "cpu"
# The main device wherever any cell ran on it.
PREFERRED = DEFAULT

Row = Dict[str, Any]
# What is the same in the two cells of one build compared across devices.
_CELL = ("python", "with_set", "case", "mode")
# The fields of a cell each side of a difference shows.
_SIDE = ("status", "error_type", "error_message", "graph_hash")
# And what the other device's side keeps besides, to run that cell again (matrix.records.repro.Cell.from_row).
_OTHER = (*_SIDE, "release", "variant", "python", "case", "mode", "with_set", "case_file", "source", "device", "gpu")


@dataclass(frozen=True)
class Difference:
    """One cell of a build that differs by device: its status, or its graph."""

    case: str
    mode: str
    python: str
    with_set: str
    main: Row  # the main device's cell: _SIDE's fields
    other: Row  # the other device's cell: _OTHER's fields

    @property
    def status_differs(self) -> bool:
        return self.main.get("status") != self.other.get("status")


@dataclass(frozen=True)
class DeviceComparison:
    """One build's cells on another device against its cells on the main device."""

    release: str  # the build, e.g. 2.11.0+cu130
    variant: str
    main: str  # the main device, e.g. cpu
    device: str  # the other device, e.g. cuda
    gpus: Tuple[str, ...]  # the GPUs the other device's cells name (the records' ``gpu``), sorted
    compared: int  # cells on both devices
    differences: Tuple[Difference, ...]  # in case, mode, Python, --with set order
    only_here: int  # cells on the other device without a cell on the main device

    @property
    def statuses(self) -> int:
        """Cells whose status differs by device."""
        return sum(1 for d in self.differences if d.status_differs)

    @property
    def graphs(self) -> int:
        """Cells of one status whose graphs differ by device."""
        return len(self.differences) - self.statuses


def of(cells: pd.DataFrame) -> pd.Series:
    """Each row's device; a row without one (an older record or table) ran on the CPU."""
    if COLUMN not in cells.columns:
        return pd.Series([DEFAULT] * len(cells), index=cells.index, dtype=object)
    return pd.Series(
        [v if isinstance(v, str) and v else DEFAULT for v in cells[COLUMN]], index=cells.index, dtype=object
    )


def main(cells: pd.DataFrame) -> str:
    """The device whose cells the report judges: PREFERRED where any cell ran on it, else the first in name order."""
    found = sorted(set(of(cells)))
    if not found:
        return PREFERRED
    return PREFERRED if PREFERRED in found else found[0]


def split(cells: pd.DataFrame) -> Tuple[pd.DataFrame, pd.DataFrame]:
    """The cells of the main device, and those of every other device, each in the order given."""
    on = of(cells)
    mine = (on == main(cells)).to_numpy()
    return cells[mine], cells[~mine]


def on(frame: pd.DataFrame, device: str) -> pd.DataFrame:
    """The rows of ``frame`` (cells, or the uses of a product) that ran on ``device``."""
    return frame[(of(frame) == device).to_numpy()] if not frame.empty else frame


def main_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells of the main device alone: those a report's verdicts read (an earlier report's table holds all)."""
    return split(cells)[0]


def compare(judged: pd.DataFrame, others: pd.DataFrame) -> Tuple[DeviceComparison, ...]:
    """Each build of ``others`` (cells on another device) against its cells in ``judged`` (the main device's),
    in the order of ``others``' builds (report order), device by device."""
    if others.empty:
        return ()
    device = main(judged) if not judged.empty else PREFERRED
    mine: Dict[Tuple[str, str], Dict[Tuple[str, ...], Row]] = {}
    for row in judged.to_dict("records"):
        mine.setdefault((str(row["release"]), str(row["variant"])), {})[_key(row)] = row
    theirs: Dict[Tuple[str, str, str], List[Row]] = {}
    for row, on in zip(others.to_dict("records"), of(others)):
        theirs.setdefault((str(row["release"]), str(row["variant"]), on), []).append(row)
    found = []
    for (release, variant, on), rows in theirs.items():
        here = mine.get((release, variant), {})
        pairs = [(here[_key(row)], row) for row in sorted(rows, key=_key) if _key(row) in here]
        gpus = sorted({str(row["gpu"]) for row in rows if isinstance(row.get("gpu"), str) and row["gpu"]})
        differences = tuple(_difference(counterpart, row) for counterpart, row in pairs if _differs(counterpart, row))
        found.append(
            DeviceComparison(release, variant, device, on, tuple(gpus), len(pairs), differences, len(rows) - len(pairs))
        )
    return tuple(found)


def _key(row: Row) -> Tuple[str, ...]:
    return tuple(_text(row.get(k)) for k in _CELL)


def _difference(main_cell: Row, other: Row) -> Difference:
    return Difference(
        case=str(other["case"]),
        mode=str(other["mode"]),
        python=str(other["python"]),
        with_set=_text(other.get("with_set")),
        main=_side(main_cell),
        other=_side(other, _OTHER),
    )


def _differs(main_cell: Row, other: Row) -> bool:
    """Whether two cells of one build differ: their status, else their graphs where both hashes are of one scheme."""
    if main_cell.get("status") != other.get("status"):
        return True
    before, after = main_cell.get("graph_hash"), other.get("graph_hash")
    if not (isinstance(before, str) and before and isinstance(after, str) and after):
        return False
    return main_cell.get("fingerprint_version") == other.get("fingerprint_version") and before != after


def _side(row: Row, keys: Tuple[str, ...] = _SIDE) -> Row:
    return {k: row.get(k) if isinstance(row.get(k), str) else None for k in keys}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class CaseOnDevice:
    """One case in one build run on another device: how many of its cells ran there, and those that differ."""

    comparison: DeviceComparison  # the build's comparison
    cells: int  # the case's cells on the other device
    differences: Tuple[Difference, ...]  # those that differ from their cell on the main device


def of_case(case: str, comparisons: Sequence[DeviceComparison], others: pd.DataFrame) -> Tuple[CaseOnDevice, ...]:
    """Where ``case`` ran on another device (``others``: the cells of every device but the main one), build by
    build in the order of ``comparisons``."""
    if others.empty:
        return ()
    mine = others[(others["case"] == case).to_numpy()]
    counted: Dict[Tuple[str, str, str], int] = {}
    for row, on in zip(mine.to_dict("records"), of(mine)):
        build = (str(row["release"]), str(row["variant"]), on)
        counted[build] = counted.get(build, 0) + 1
    return tuple(
        CaseOnDevice(c, counted[c.release, c.variant, c.device], tuple(d for d in c.differences if d.case == case))
        for c in comparisons
        if counted.get((c.release, c.variant, c.device))
    )
