"""First-use imports paid once in a process that others are forked from, so that each forked job times its own work.

Standard library only (torch is imported when called), Python 3.8 syntax.
"""

from __future__ import annotations

# What ``torch.export.load`` and running a loaded program import on first use (more than 0.8 s on
# 2.13): the deserializer and the unlifting code. Imported once where loads are forked from, so
# that each load times itself, not these imports; a module a release lacks is skipped.
LOADER_MODULES = ("torch._export.serde.serialize", "torch.export._unlift")


def load() -> None:
    """Import what loading a program needs, without exporting or loading anything.

    A process that only imported these modules is still one that never exported: importing them
    is what the first ``torch.export.load`` in a user's process does. What a particular program
    needs beyond them (its operators' modules, a dynamic shape's solver) its own load imports.
    """
    import importlib

    for name in LOADER_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: S112 - a release without it loads each program cold
            continue
