"""Why a load failed: the forensics of ``load`` (:mod:`.loader`) and of a cell's fresh load.

A failed ``torch.export.load`` raises what the release's loader met, which is not always what
went wrong: from 2.8 the pt2 archive loader's error is hidden behind the older zip reader's
(:func:`load_error` records the first instead), and an archive saved by another release may use a
serializer schema this one cannot read (both versions go into the message). A case module that
did not import may leave what the program names unregistered (:func:`blame_case_module`).

Runs in the isolated process of a load job (:mod:`.load_job`). Standard library only (torch is
imported where needed), Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ..contract import records
from . import artifacts


def load_error(path: str, meta: Dict[str, Any], exc: Exception) -> Dict[str, Any]:
    """The record fields of a ``torch.export.load`` that raised ``exc``: the error torch met, and both schema versions.

    From 2.8, ``torch.export.load`` first tries the pt2 archive loader and, when that raises a
    RuntimeError, falls back to the zip reader of 2.7 and before, whose error on an archive (a
    KeyError for its ``version`` entry, or a request to read the logged warnings) hides the
    first one. For an archive, the archive loader's own error is recorded instead. For a file
    in the old zip layout the zip reader's error is the one that applies, and is kept.
    """
    from .failure import describe_error

    layout, load_pt2 = _layout(path), _archive_loader()
    met = _archive_error(load_pt2, path) if layout == "archive" and load_pt2 is not None else None
    fields = describe_error(met if met is not None else exc)
    note = ""
    if layout == "archive" and load_pt2 is None:
        note = " (a pt2 archive, as torch.export.save writes from 2.8; this release reads only the older zip layout)"
    note += " [serializer schema: saved %s, loader %s]" % (
        schema_tuple(meta.get("serializer_version")),
        schema_tuple(artifacts.serializer_version()),
    )
    message = fields.get("error_message") or ""
    fields["error_message"] = message[: max(0, MESSAGE_CHARS - len(note))] + note
    return fields


# The longest error_message a record keeps (as failure.describe_error cuts it).
MESSAGE_CHARS = 500


def schema_tuple(version: Any) -> str:
    """A serializer schema version as torch prints it: ``"7.3"`` is ``(7, 3)``; ``unknown`` where none was recorded."""
    if not isinstance(version, str) or not version:
        return "unknown"
    parts = version.split(".")
    if len(parts) < 2 or not all(part.isdigit() for part in parts):
        return version
    return "(%s)" % ", ".join(str(int(part)) for part in parts)


def _layout(path: str) -> Optional[str]:
    """``zip`` (the layout ``torch.export.save`` wrote up to 2.7: a ``version`` entry at the top), ``archive``
    (any other zip: a pt2 archive, entries in one folder), or None when the file is no zip."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return None
    return "zip" if "version" in names else "archive"


def _archive_loader() -> Optional[Callable[..., Any]]:
    """This release's pt2 archive loader (``torch.export.pt2_archive._package.load_pt2``, from 2.8), or None."""
    try:
        from torch.export.pt2_archive._package import load_pt2
    except Exception:
        return None
    return load_pt2  # type: ignore[no-any-return]


def _archive_error(load_pt2: Callable[..., Any], path: str) -> Optional[Exception]:
    """What the archive loader raises on ``path``; None when it loads."""
    try:
        load_pt2(path)
    except MemoryError:
        raise
    except Exception as exc:
        return exc
    return None


def blame_case_module(fields: Dict[str, Any]) -> None:
    """Add to a failed load's error message that the case module did not import, where it did not: what the
    program names (custom ops, pytree types) may be registered there."""
    note = fields.get("case_module") or ""
    if note.startswith("failed"):
        fields["error_message"] = records.without_paths(
            "%s (the case module did not import: %s)" % (fields.get("error_message") or "", note[len("failed: ") :])
        )
