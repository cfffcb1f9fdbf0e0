"""What a reader citing a report needs, from the environment records: the machine (CPU model, cores), the GPU or
that there was none, and the device each build's cells ran on; with the build's stamp, one line for the header;
and the front page's section on the run: each run whose records it shows, how to cite it, how to make it again.

Only what the records say is said: a record from before the environment record held ``cores`` gives "cores not
recorded", and a build whose records name no device is "not recorded", never guessed from its name (a ``+cu…``
build may well have run on the CPU).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract import stages
from matrix.contract.products import PRODUCTS, PROGRAM
from matrix.records import store
from matrix.report import again
from matrix.report import document as d
from matrix.report import phrases as say
from matrix.report.stamp import Source, Stamp

if TYPE_CHECKING:
    from matrix.report.findings import Findings

NOT_RECORDED = "not recorded"


def _values(frame: pd.DataFrame, column: str) -> List[str]:
    if column not in frame.columns:
        return []
    return sorted({str(v) for v in frame[column].dropna() if str(v) not in ("", "nan", "<NA>")})


def cpu(envs: pd.DataFrame) -> str:
    """The CPU model and its cores: ``AMD EPYC, 2 cores``; each machine where the records name several."""
    models = _values(envs, "cpu")
    cores = [str(int(float(c))) for c in _values(envs, "cores")]
    if not models and not cores:
        return "a CPU " + NOT_RECORDED
    said = "%s cores" % " or ".join(sorted(set(cores), key=int)) if cores else "cores " + NOT_RECORDED
    return "%s, %s" % (" / ".join(models) or "CPU model " + NOT_RECORDED, said)


def gpu(envs: pd.DataFrame) -> str:
    """The GPU the cells ran on; ``none`` where they ran on the CPU (saying so where a GPU was there, unused)."""
    available = envs[envs["cuda_available"].fillna(False).astype(bool)] if "cuda_available" in envs.columns else envs
    names = _values(available, "gpu_name") if "cuda_available" in envs.columns else []
    ran = _values(envs, "device")
    if not ran:
        return NOT_RECORDED
    if "cuda" in ran:
        return ", ".join(names) or "a CUDA device (model not recorded)"
    return "none (%s present, unused)" % ", ".join(names) if names else "none"


def devices(envs: pd.DataFrame) -> List[Tuple[str, List[str]]]:
    """Each device and the builds (torch versions, in version order) whose cells ran on it."""
    by: Dict[str, List[str]] = {}
    if envs.empty or "torch_version" not in envs.columns:
        return []
    for row in envs.to_dict("records"):
        device = row.get("device")
        device = str(device) if isinstance(device, str) and device else NOT_RECORDED
        build = str(row["torch_version"])
        if build not in by.setdefault(device, []):
            by[device].append(build)
    return [(device, store.ordered(builds)) for device, builds in sorted(by.items())]


def devices_words(envs: pd.DataFrame) -> str:
    """``cpu: every build`` or ``cuda: 2.15.0+cu132; cpu: 2.1.2+cu121, …``."""
    found = devices(envs)
    if len(found) == 1:
        return "%s: every build" % found[0][0]
    return "; ".join("%s: %s" % (device, ", ".join(builds)) for device, builds in found)


def dates(table: pd.DataFrame, column: str = "started_at") -> str:
    """The days (UTC) of ``table``'s times in ``column``: ``2026-11-20 to 2026-11-24``; "" for none. By default,
    the days the cells ran, from the environment records."""
    days = sorted(str(v)[:10] for v in table.get(column, pd.Series(dtype=object)).dropna())
    return " to ".join(dict.fromkeys([days[0], days[-1]])) if days else ""


def line(stamp: Optional[Stamp], envs: pd.DataFrame) -> str:
    """The header's line: the build's stamp, then the machine, the GPU and the devices the cells ran on."""
    when = dates(envs) or "on dates not recorded"
    made = stamp.words()[0].upper() + stamp.words()[1:] + "; " if stamp is not None else ""
    return "%scells run %s on %s; GPU: %s; device per build: %s." % (
        made,
        when,
        cpu(envs),
        gpu(envs),
        devices_words(envs) or NOT_RECORDED,
    )


def runs(f: Findings) -> List[Tuple[str, str, str, str]]:
    """Each kind of record the report shows, with its runs: (what, how many runs, the days its records were written
    on, the commit of the report that first published them); the cells first, then each product, then the opt-in
    stages' outcomes that another run gave (``report --stages-from``), each named with the stamp of its own run."""
    tables = [("cells", f.environments, "started_at", "")]
    tables += [("loads of saved programs", f.loads, "finished_at", PROGRAM.name)]
    tables += [(u.product.many, u.table, "finished_at", u.product.name) for u in f.uses[1:]]
    out = []
    for what, table, column, name in tables:
        if table.empty or "run_id" not in table.columns:
            continue
        when = dates(table, column) or NOT_RECORDED
        counted = table["run_id"].nunique()
        out.append((what, str(counted) if counted else NOT_RECORDED, when, _commit(f.stamp_of(name))))
    for source in f.sources:
        for what in _stage_labels(source.shows):
            out.append((what + _scope(f, source), str(source.runs or NOT_RECORDED), source.dates or NOT_RECORDED,
                        _commit(source.stamp)))  # fmt: skip
    return out


def _scope(f: Findings, source: Source) -> str:
    """Which of the report's cases and modes a joined run covers, " of real_models/* (non-strict)": its outcomes
    say nothing of the others (a run kept where it did not record them: nothing)."""
    if not source.cases:
        return ""
    everything = set(f.cells["case"].astype(str)) if "case" in f.cells.columns else set()
    cases = "every case" if everything <= set(source.cases) else ", ".join(again.selected(source.cases, everything))
    return " of %s (%s)" % (cases, ", ".join(source.modes) or "modes not recorded")


def _commit(stamp: Optional[Stamp]) -> str:
    return stamp.commit if stamp is not None and stamp.commit else NOT_RECORDED


def _stage_labels(names: Sequence[str]) -> List[str]:
    """``ONNX outcomes`` for each shown stage among ``names``, in declared order."""
    return ["%s outcomes" % s.shown.label for s in stages.SHOWN if s.name in names and s.shown is not None]


def cite(f: Findings) -> str:
    """How to cite the report, in one line: its own stamp, then that of each other run whose data it shows."""
    made = f.stamp.words() if f.stamp is not None else "stamp not recorded"
    runs_on = dates(f.environments) or "dates not recorded"
    others = "".join(
        "; %s%s from the run %s"
        % (", ".join(_stage_labels(s.shows) + _product_nouns(s.shows)), _scope(f, s), _of_run(s))
        for s in f.sources
    )
    return "%s (%s; cells run %s%s)." % (f.title, made, runs_on, others)


def _of_run(source: Source) -> str:
    """The run's stamp where its folder kept one (a published report's); a record folder keeps none: its days."""
    if source.stamp.date:
        return source.stamp.words()
    return "of %s (its commit not recorded)" % (source.dates or "dates not recorded")


def _product_nouns(names: Sequence[str]) -> List[str]:
    return ["%s %ss" % (p.made, p.noun) for p in PRODUCTS if p.name in names]


def section(f: Findings, facts: Sequence[Tuple[str, str]]) -> d.Section:
    """The run: its ``facts``, the runs whose records it shows, how to cite it and the commands that make it again."""
    blocks: List[d.Block] = [say.table(["", ""], [(d.phrase(k), d.phrase(v)) for k, v in facts])]
    found = runs(f)
    if found:
        rows = [tuple(d.phrase(v) for v in run) for run in found]
        blocks.append(say.table(["records", "runs", "written on (UTC)", "published at commit"], rows))
    blocks.append(d.Paragraph(d.phrase(d.Strong(d.phrase("How to cite")), ": ", cite(f))))
    steps = d.Items(tuple(d.Item(d.phrase(what, ": ", d.Code(command))) for what, command in again.commands(f)), True)
    blocks.append(
        d.Section("run-it-again", "Run it again", (
            d.Paragraph(d.phrase(
                "From a clone of the project at the commit above, with nox installed (the records go to ",
                d.Code("results/latest/"), ", the report to ", d.Code("reports/local/"), "):")),
            steps,
            d.Paragraph(d.phrase("A single failure is reproduced without this tool by the script on its case's page.")),
        ), collapsed=True)
    )  # fmt: skip
    return d.Section("the-run", "The run", tuple(blocks))
