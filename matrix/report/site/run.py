"""The site's section on the run: what ran where and when, as the front page's header says it, and how to run it
again.

The facts are the Markdown header's (:func:`matrix.report.index.run_facts`): the builds, variants, Pythons,
sources, machine, device, dates and cells. The commands are the noxfile's: the ``run`` sessions take the builds
as ``EXPORT_MATRIX_TORCH`` selection words (a PyPI build by its release, any other by its local tag), and
``--with`` sets as ``EXPORT_MATRIX_WITH``.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import pandas as pd

from matrix.envs.releases import DEFAULT_VARIANT
from matrix.records import devices, transitions
from matrix.records.scope import Build
from matrix.report import index
from matrix.report import markdown as md
from matrix.report.findings import Findings
from matrix.report.site.markup import text


def facts(f: Findings) -> List[Tuple[str, str]]:
    """The run in (label, plain text) pairs, as the Markdown front page's "The run" table has them."""
    found = index.run_facts(f, unknown="not recorded")
    found[-1] = ("cells", "%s; from %d cell records" % (md.cells_counted(f.scope), f.runs))
    return found


def selection_word(build: Build) -> str:
    """The ``EXPORT_MATRIX_TORCH`` word that selects a build: ``2.15.0`` (PyPI's), ``2.13.0+cpu`` (another index)."""
    version, variant = build
    release = transitions.base(version)
    if variant == DEFAULT_VARIANT:
        return release
    return version if "+" in version else "%s+%s" % (release, variant)


# How the commands name where the cells ran: the run sessions choose CUDA on a machine with a GPU unless told.
DEVICE_WORDS = {"cpu": "on the CPU", "cuda": "on CUDA (a machine with an NVIDIA GPU)"}


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
    """How to run this matrix again: (what it does, command), in the order to run them. Each device the cells ran
    on gets its own commands, which name it: the run sessions would otherwise choose CUDA where a GPU is visible."""
    by_device = _builds_by_device(f) or {devices.DEFAULT: [selection_word(b) for b in f.scope.builds]}
    sessions = "run load" if not f.loads.empty else "run"
    with_sets = sorted({str(w) for w in f.cells.get("with_set", pd.Series(dtype=object)).dropna() if str(w)})
    found = []
    for device, builds in by_device.items():
        words, where = " ".join(builds), DEVICE_WORDS.get(device, "on " + device)
        found.append(
            (
                "Install each build of this report and run every case in both modes %s" % where
                + (", then load every saved program on each build" if sessions == "run load" else ""),
                'EXPORT_MATRIX_TORCH="%s" nox -s %s -- --device %s' % (words, sessions, device),
            )
        )
        for named in with_sets:
            found.append(
                ("The cells run with the --with set %s, %s" % (named, where), 'EXPORT_MATRIX_WITH="%s"'
                 ' EXPORT_MATRIX_TORCH="%s" nox -s %s -- --device %s' % (named, words, sessions, device))
            )  # fmt: skip
    found.append(("Build the report (Markdown, tables, charts, this site) from the records", "nox -s report"))
    found.append(
        ("The same, from chosen record folders into a chosen folder", "export-matrix report RECORD_DIR --out DIR")
    )
    return found


def render(f: Findings) -> str:
    """The section: the facts as a table, then the commands."""
    rows = "".join("<tr><th>%s</th><td>%s</td></tr>" % (text(label), text(value)) for label, value in facts(f))
    steps = "".join(
        "<li>%s:<pre><code>%s</code></pre></li>" % (text(what), text(command)) for what, command in commands(f)
    )
    return "\n".join(
        [
            '<section id="run"><h2>The run</h2>',
            '<table class="facts">%s</table>' % rows,
            '<details><summary><h3 id="reproduce">Run it again</h3></summary>',
            "<p>From a clone of the project with nox installed (the records go to <code>results/latest/</code>, the"
            " report to <code>reports/local/</code>):</p>",
            "<ol>%s</ol>" % steps,
            "<p>A single failure is reproduced without this tool by the script on its case's page"
            " (<em>Reproduce</em>).</p>",
            "</details></section>",
        ]
    )
