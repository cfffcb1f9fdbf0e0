"""The sample's confounds (records.confounds), judged on hand-written records."""

from __future__ import annotations

import pandas as pd

from matrix.records import confounds

from conftest import cell_table as cells
from conftest import environment_of as environment
from conftest import make_cell

KNOWN = ["2.%d.0" % minor for minor in range(1, 16)]


def test_sample_names_minor_series_not_run_build_changes_and_the_strict_default_flip() -> None:
    releases = ["2.1.2", "2.5.1", "2.8.0", "2.13.0+cpu", "2.15.0"]
    table = cells([make_cell(r, "c", "pass") for r in releases])
    envs = pd.DataFrame(
        [
            environment("2.1.2", "12.1", None, keyword=False),
            environment("2.5.1", "12.4", True),
            environment("2.8.0", "12.8", False),
            environment("2.13.0+cpu", None, False),
            environment("2.15.0", "13.2", False),
        ]
    )
    moves = pd.DataFrame([{"kind": "fix", "before": "2.8.0", "after": "2.13.0+cpu"}])
    compared = list(zip(releases, releases[1:]))
    found = confounds.sample(table, moves, envs, compared, KNOWN)
    assert found.minors == tuple("2.%d" % m for m in range(1, 16))
    assert found.run == ("2.1", "2.5", "2.8", "2.13", "2.15")
    assert found.not_run[:3] == ("2.2", "2.3", "2.4") and len(found.not_run) == 10
    assert [(c.before, c.after, c.build_before, c.build_after, c.fixes) for c in found.build_changes] == [
        ("2.8.0", "2.13.0+cpu", "CUDA 12.8", "CPU", 1),
        ("2.13.0+cpu", "2.15.0", "CPU", "CUDA 13.2", 0),
    ]
    defaults = {d.release: (d.mode, d.keyword) for d in found.strict_defaults}
    assert defaults["2.1.2"] == ("strict", False) and defaults["2.8.0"] == ("non-strict", True)
    ((before, after),) = found.strict_flips
    assert (before.release, after.release) == ("2.5.1", "2.8.0")
    # Without environment records the local tag names the build, and a release without one is not judged.
    bare = confounds.sample(cells([make_cell(r, "c", "pass") for r in ("2.7.0+cu126", "2.8.0+cpu", "2.9.0")]),
                            moves.iloc[0:0], pd.DataFrame(), [("2.7.0+cu126", "2.8.0+cpu"), ("2.8.0+cpu", "2.9.0")],
                            KNOWN)  # fmt: skip
    assert [(c.build_before, c.build_after) for c in bare.build_changes] == [("CUDA 12.6", "CPU")]
    assert bare.not_run == () and all(d.mode is None for d in bare.strict_defaults)
