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
from matrix.records import devices as by_device
from matrix.records import store
from matrix.report import again
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report.stamp import Source, Stamp

if TYPE_CHECKING:
    from matrix.report.findings import Findings

NOT_RECORDED = "not recorded"


def values(frame: pd.DataFrame, column: str, ordered: bool = False) -> List[str]:
    """The distinct values of a column as text, sorted (in version order where ``ordered``)."""
    if column not in frame.columns:
        return []
    found = {str(v) for v in frame[column].dropna() if str(v) not in ("", "nan", "<NA>")}
    return store.ordered(found) if ordered else sorted(found)


def cpu(envs: pd.DataFrame) -> str:
    """The CPU model and its cores: ``AMD EPYC, 2 cores``; each machine where the records name several."""
    models = values(envs, "cpu")
    cores = [str(int(float(c))) for c in values(envs, "cores")]
    if not models and not cores:
        return "a CPU " + NOT_RECORDED
    said = "%s cores" % " or ".join(sorted(set(cores), key=int)) if cores else "cores " + NOT_RECORDED
    return "%s, %s" % (" / ".join(models) or "CPU model " + NOT_RECORDED, said)


def gpu(envs: pd.DataFrame) -> str:
    """The GPU the cells ran on; ``none`` where they ran on the CPU (saying so where a GPU was there, unused)."""
    available = envs[envs["cuda_available"].fillna(False).astype(bool)] if "cuda_available" in envs.columns else envs
    names = values(available, "gpu_name") if "cuda_available" in envs.columns else []
    ran = values(envs, "device")
    if not ran:
        return NOT_RECORDED
    if "cuda" in ran:
        return ", ".join(names) or "a CUDA device (model not recorded)"
    return "none (%s present, unused)" % ", ".join(names) if names else "none"


def devices_words(envs: pd.DataFrame) -> str:
    """Each device and the builds whose cells ran on it, in version order: ``cpu: every build`` or ``cuda:
    2.15.0+cu132; cpu: 2.1.2+cu121, …``."""
    if envs.empty or "torch_version" not in envs.columns:
        return ""
    by: Dict[str, List[str]] = {}
    for row in envs.to_dict("records"):
        device = row.get("device")
        by.setdefault(device if isinstance(device, str) and device else NOT_RECORDED, []).append(row["torch_version"])
    if len(by) == 1:
        return "%s: every build" % next(iter(by))
    return "; ".join("%s: %s" % (device, ", ".join(store.ordered(builds))) for device, builds in sorted(by.items()))


def devices(envs: pd.DataFrame, cells: pd.DataFrame, elsewhere: Optional[pd.DataFrame] = None) -> str:
    """Where the cells ran, said so that no build's name reads as a GPU run where none was: ``cpu (the CUDA builds,
    +cu…, ran on the CPU: no cell ran on a GPU)``, or ``cuda (NVIDIA H200), cpu``. With ``elsewhere``, the cells of
    other devices than ``cells``' (records.devices.split): which builds ran on each."""
    if elsewhere is not None and not elsewhere.empty:
        return _each_device(envs, cells, elsewhere)
    ran = values(envs, "device") or values(cells, "device")
    if not ran:
        return ""
    gpus = values(envs, "gpu_name")
    text = ", ".join("%s (%s)" % (device, ", ".join(gpus)) if device == "cuda" and gpus else device for device in ran)
    builds = values(cells, "release") + values(cells, "torch_version") + values(envs, "torch_version")
    if "cuda" not in ran and any("+cu" in v or "+rocm" in v for v in builds):
        text += " (the CUDA builds, +cu…, ran on the CPU: no cell ran on a GPU)"
    return text


def _each_device(envs: pd.DataFrame, cells: pd.DataFrame, elsewhere: pd.DataFrame) -> str:
    """``cpu: every build of the grid; cuda (NVIDIA H200, …): 2.15.0+cu132 too, compared …``."""
    main = by_device.main(cells)
    parts = ["%s: every build of the grid, the transitions and the verdicts" % main]
    on = by_device.of(elsewhere)
    for device in sorted(set(on)):
        mine = elsewhere[(on == device).to_numpy()]
        gpus = values(mine, "gpu") or (values(envs, "gpu_name") if device == "cuda" else [])
        name = "%s (%s)" % (device, "; ".join(gpus)) if gpus else device
        parts.append(
            "%s: %s too, compared cell by cell with its %s cells, never in the grid"
            % (name, ", ".join(store.ordered(mine["release"])), main)
        )
    return "; ".join(parts)


def machines(envs: pd.DataFrame) -> List[str]:
    """Each machine the environment records name: architecture, CPU and platform."""
    rows = envs.to_dict("records")
    found = {", ".join(str(row[k]) for k in ("machine", "cpu", "platform") if row.get(k)) for row in rows}
    return sorted(found - {""})


def facts(f: Findings) -> List[Tuple[str, str]]:
    """The run in (label, plain text) pairs: the front page's "The run" table."""
    cells, envs = f.cells, f.environments
    return [
        ("releases", "%s: %s" % (md.releases_and_builds(f.scope), ", ".join(md.build_names(f.scope)))),
        ("variants", ", ".join(values(cells, "variant"))),
        ("Python", ", ".join(values(cells, "python", ordered=True))),
        ("sources", ", ".join(values(cells, "source"))),
        ("machine", "; ".join(machines(envs)) or NOT_RECORDED),
        ("device", devices(envs, cells, f.elsewhere) or NOT_RECORDED),
        ("CPU", cpu(envs)),
        ("GPU", gpu(envs)),
        ("device per build", devices_words(envs) or NOT_RECORDED),
        ("run on", "%s (UTC, from the environment records)" % (dates(envs) or "unknown")),
        ("cells", "%s; from %s" % (md.cells_counted(f.scope), d.plural(f.runs, "cell record"))),
    ]


def dates(table: pd.DataFrame, column: str = "started_at") -> str:
    """The days (UTC) of ``table``'s times in ``column``: ``2026-11-20 to 2026-11-24``; "" for none. By default,
    the days the cells ran, from the environment records."""
    days = sorted(str(v)[:10] for v in table.get(column, pd.Series(dtype=object)).dropna())
    return " to ".join(dict.fromkeys([days[0], days[-1]])) if days else ""


def line(stamp: Optional[Stamp], envs: pd.DataFrame) -> str:
    """The header's line: the build's stamp, then the machine, the GPU and the devices the cells ran on."""
    when = dates(envs) or "on dates not recorded"
    made = stamp.words()[0].upper() + stamp.words()[1:] + "; " if stamp is not None else ""
    where = (cpu(envs), gpu(envs), devices_words(envs) or NOT_RECORDED)
    return "%scells run %s on %s; GPU: %s; device per build: %s." % (made, when, *where)


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
    words = again.selected(f, source)
    cases = "every case" if words is None else ", ".join(words)
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
    """The run's stamp where its folder kept one (a published report's); a record folder keeps none: its days, and
    the commit its runs were made at where they say one."""
    if source.stamp.date:
        return source.stamp.words()
    if source.stamp.commit:
        return "of %s at commit %s" % (source.dates or "dates not recorded", source.stamp.commit)
    return "of %s (its commit not recorded)" % (source.dates or "dates not recorded")


def _product_nouns(names: Sequence[str]) -> List[str]:
    return ["%s %ss" % (p.made, p.noun) for p in PRODUCTS if p.name in names]


def section(f: Findings) -> d.Section:
    """The run: its :func:`facts`, the runs whose records it shows, how to cite it and the commands that make it
    again."""
    blocks: List[d.Block] = [say.table(["", ""], [(d.phrase(k), d.phrase(v)) for k, v in facts(f)])]
    found = runs(f)
    if found:
        rows = [tuple(d.phrase(v) for v in run) for run in found]
        blocks.append(say.table(["records", "runs", "written on (UTC)", "published or made at commit"], rows))
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
