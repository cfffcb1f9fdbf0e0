"""The use protocol: how a build uses one product that another release made (:mod:`matrix.contract.products`).

A :class:`Use` knows, for its product, the record of one use (beyond the fields every use has), what refuses a
use before any process starts (a damaged folder, a release or machine that lacks what it needs), the job that
does it, the fields of its result-cache key, its label in the progress lines and its journal key; the uses a
``load`` plans of it, what the load learns once before forking for it, and the job kinds and merges it brings.
This class is a program's load with torch.export.load; a product's declaration names the worker module whose
``USE`` refines it (``Product.module``), and :mod:`.uses` is the registry the load batch and a run's fresh
loads both call.

Standard library only (the jobs import torch when they run), Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..contract.layout import Artifact
from ..contract.products import PROGRAM, Product
from ..contract.schema import LOAD_STATUSES, LoadStatus
from .load_job import LoadJob, incomplete

Fields = Dict[str, Any]
# A use's availability on this build: (what does it, or None) and what is missing where nothing does.
Found = Tuple[Any, Optional[str]]
# Merge of a follow-up: (the first job's result, the follow-up's result, the follow-up) -> None; it updates the
# first (jobs.MERGES).
Merge = Callable[[Fields, Fields, Dict[str, Any]], None]


def listed(meta: Fields, name: Any) -> Fields:
    """The entry of the file ``name`` in meta.json's list (its size and sha256), or {}."""
    entries = [e for e in meta.get("files") or [] if isinstance(e, dict) and e.get("name") == name]
    return entries[0] if entries else {}


class Use:
    """A program's load with torch.export.load (products.PROGRAM); the others refine it."""

    product: Product = PROGRAM
    # Whether a damaged folder is refused by the parent (else the use's own process finds it), and what it says.
    refuses_damaged = True
    # Whether the loading release's C++ compiler decides its result (part of its key).
    compiles = False
    # Whether its job hands a follow-up to a fresh process (the engine then starts that process's server).
    follows = False
    # The job kinds it brings beside the load's (jobs.KINDS), and the merges their follow-ups name (jobs.MERGES).
    kinds: Tuple[Any, ...] = ()
    merges: Mapping[str, Merge] = {}

    def journal_more(self, dependency_set: str) -> list:
        """What a use adds to its artifact's key in the journal (see ``uses.journal_key``)."""
        # Torch alone adds nothing, so that the keys of loads recorded before sets were told apart still match.
        return [dependency_set] if dependency_set else []

    def fields(self, artifact: Artifact, env: Fields) -> Fields:
        """The fields of its record beyond those every use has (``products.planned_record``)."""
        meta = artifact.meta or {}
        return {
            "saved_serializer_version": meta.get("serializer_version"),
            "serializer_version": env.get("serializer_version"),
            "format_version": meta.get("format_version"),
        }

    def present(self, artifact: Artifact) -> bool:
        """Whether ``artifact``'s folder holds what this use uses."""
        return True

    def planned(self, found: Sequence[Artifact], version: str, given: Mapping[str, Any]) -> List[Artifact]:
        """The artifacts a ``load`` on ``version`` uses this product of, where its declared options (``given``:
        each product's option values) ask for it; only a product with options of its own is planned so."""
        return []

    def set_up(self, loads: Any) -> None:
        """What the load batch ``loads`` learns once, before forking, where it plans a use of this product."""

    def label(self, artifact: Artifact, record: Fields) -> str:
        return artifact.relative

    def damaged(self, problem: str) -> Optional[Fields]:
        return incomplete(problem)

    def described(self, record: Fields) -> Optional[Fields]:
        """A use refused for what its meta.json says (after trust is settled), or None."""
        return None

    def available(self, loads: Any, record: Fields) -> Found:
        """What does the use on the batch ``loads``' build, or None and what is missing."""
        return (
            (True, None) if loads.can_load else (None, "torch %s has no torch.export.load" % loads.env["torch_version"])
        )

    def lacking(self, missing: Optional[str]) -> Fields:
        """The record fields of a use that nothing on this build (or machine) does: ``missing`` says what lacks."""
        return {"status": LoadStatus.NOT_APPLICABLE.value, "error_message": missing or "nothing here does it",
                "error_type": None}  # fmt: skip

    def job(self, loads: Any, folder: str, meta: Fields, record: Fields) -> Tuple[Any, float]:
        """The job, and the seconds it may take on top of --timeout."""
        return LoadJob(folder=folder, meta=meta), 0.0

    def fresh(self, folder: str, meta: Fields) -> Tuple[Any, str]:
        """The job that loads what a cell kept of this product again in a fresh process, and the merge (a name in
        jobs.MERGES) that folds its result into the cell's."""
        return LoadJob(folder=folder, meta=meta), "fresh-load"

    def cache_fields(self, artifact: Artifact) -> Optional[Fields]:
        """What its key adds to a load's; None where the use cannot be keyed."""
        return {}

    def tried(self, status: Any) -> bool:
        """Whether a result says something of torch (a result that did not try is never kept for ``load``)."""
        return status in LOAD_STATUSES
