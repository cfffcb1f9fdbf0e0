"""What a reader citing a report needs, from the environment records: the machine (CPU model, cores), the GPU or
that there was none, and the device each build's cells ran on; with the build's stamp, one line for the header.

Only what the records say is said: a record from before the environment record held ``cores`` gives "cores not
recorded", and a build whose records name no device is "not recorded", never guessed from its name (a ``+cu…``
build may well have run on the CPU).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import pandas as pd

from matrix.records import store
from matrix.report.stamp import Stamp

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


def dates(envs: pd.DataFrame) -> str:
    """The days the cells ran (UTC, from the environment records): ``2026-11-20 to 2026-11-24``; "" for none."""
    started = sorted(str(v)[:10] for v in envs.get("started_at", pd.Series(dtype=object)).dropna())
    return " to ".join(dict.fromkeys([started[0], started[-1]])) if started else ""


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
