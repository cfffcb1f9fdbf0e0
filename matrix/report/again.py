"""How to make a report again: the commands, in order, that run its builds and build it (the front page's "Run it
again").

The commands are the noxfile's: the ``run`` sessions take the builds as ``EXPORT_MATRIX_TORCH`` selection words (a
PyPI build by its release, any other by its local tag), and ``--with`` sets as ``EXPORT_MATRIX_WITH``; a report
that shows an AOTInductor run's packages and compiles names that run's selection and ``report --stages-from``. Where
the cells carry the outcome of an opt-in stage (a declared one: ``Stage.shown``), the run names it in ``--stages``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Tuple

import pandas as pd

from matrix.contract import stages
from matrix.envs.releases import DEFAULT_VARIANT
from matrix.records import devices, stage_outcomes, transitions
from matrix.records.scope import Build

if TYPE_CHECKING:
    from matrix.report.findings import Findings

# How the commands name where the cells ran: the run sessions choose CUDA on a machine with a GPU unless told.
DEVICE_WORDS = {"cpu": "on the CPU", "cuda": "on CUDA (a machine with an NVIDIA GPU)"}
AOTI_RECORDS = "results/aoti"  # where the commands put the AOTInductor run's records


def selection_word(build: Build) -> str:
    """The ``EXPORT_MATRIX_TORCH`` word that selects a build: ``2.15.0`` (PyPI's), ``2.13.0+cpu`` (another index)."""
    version, variant = build
    release = transitions.base(version)
    if variant == DEFAULT_VARIANT:
        return release
    return version if "+" in version else "%s+%s" % (release, variant)


def _builds_by_device(f: Findings) -> Dict[str, List[str]]:
    """Each device the report's cells ran on (the main device first), with the selection words of its builds."""
    found: Dict[str, List[str]] = {}
    for frame in (f.cells, f.model.elsewhere):
        if frame.empty:
            continue
        for device, release, variant in zip(devices.of(frame), frame["release"], frame["variant"]):
            words = found.setdefault(str(device), [])
            word = selection_word((str(release), str(variant)))
            if word not in words:
                words.append(word)
    return found


def commands(f: Findings) -> List[Tuple[str, str]]:
    """How to make this report again: (what it does, command), in the order to run them. Each device the cells ran
    on gets its own commands, which name it: the run sessions would otherwise choose CUDA where a GPU is visible."""
    found = []
    if f.stamp is not None and f.stamp.commit:
        found.append(("Check out the code that built this report", "git checkout %s" % f.stamp.commit))
    by_device = _builds_by_device(f) or {devices.DEFAULT: [selection_word(b) for b in f.scope.builds]}
    sessions = "run load" if not f.loads.empty else "run"
    opt_in = [s.name for s in stage_outcomes.ran_in(f.cells) if s.name not in stages.DEFAULT]
    options = " --stages %s" % ",".join((*stages.DEFAULT, *opt_in)) if opt_in else ""
    with_sets = sorted({str(w) for w in f.cells.get("with_set", pd.Series(dtype=object)).dropna() if str(w)})
    for device, builds in by_device.items():
        words, where = " ".join(builds), DEVICE_WORDS.get(device, "on " + device)
        found.append(
            (
                "Install each build of this report and run every case in both modes %s" % where
                + (" with the stages %s too" % ", ".join(opt_in) if opt_in else "")
                + (", then load every saved program on each build" if sessions == "run load" else ""),
                'EXPORT_MATRIX_TORCH="%s" nox -s %s -- --device %s%s' % (words, sessions, device, options),
            )
        )
        for named in with_sets:
            found.append(
                ("The cells run with the --with set %s, %s" % (named, where), 'EXPORT_MATRIX_WITH="%s"'
                 ' EXPORT_MATRIX_TORCH="%s" nox -s %s -- --device %s%s' % (named, words, sessions, device, options))
            )  # fmt: skip
    shows_aoti = any(not u.empty for u in f.model.uses[1:])  # a product after the saved programs
    if shows_aoti:
        found.append(
            ("Run the AOTInductor selection (its cases, releases and compiles of older programs), into %s"
             % AOTI_RECORDS, "EXPORT_MATRIX_TORCH=aoti nox -s run load -- --out %s" % AOTI_RECORDS)
        )  # fmt: skip
    found.append(
        (
            "Build the report (Markdown, tables, charts, the site) from the records",
            "export-matrix report results/latest --out reports/local"
            + (" --stages-from %s" % AOTI_RECORDS if shows_aoti else ""),
        )
    )
    return found
