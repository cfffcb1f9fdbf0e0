"""A program saved on one real torch release and loaded on another (`pytest -m releases`).

The local CPU build 2.13.0+cpu and PyPI's 2.1.2, the oldest release in the matrix, as in
``test_matrix_integration``: each runs ``run --artifacts`` over one fixture case, then
``load`` over both releases' artifacts. Each release loads its own programs; neither
loads the other's, since the serialized-program format changed between them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from matrix.contract import records
from matrix.envs import env_errors, environments, pythons, releases
from matrix.records import artifacts as loads_table
from matrix.records import load_regressions, store
from matrix.worker import forensics

from conftest import FIXTURES, ROOT

pytestmark = pytest.mark.releases

BUILDS = ("2.13.0+cpu", "2.1.2")


@pytest.fixture(scope="module", autouse=True)
def only_when_asked(request: pytest.FixtureRequest) -> None:
    # Installing releases takes minutes and gigabytes: run only when the marker is selected. Module
    # scope, so that the check comes before the module-scoped fixtures that install.
    if "releases" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("installs torch releases; run with `pytest -m releases` or `nox -s integration`")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, environments.Environment]:
    """EXPORT_MATRIX_ENV_DIR when set (reuse across runs), else a fresh folder: real installs."""
    given = os.environ.get(environments.ENV_DIR_VARIABLE)
    env_dir = Path(given) if given else tmp_path_factory.mktemp("envs")
    out = tmp_path_factory.mktemp("install-records")
    matrix = releases.default_matrix()
    found = {}
    for word in BUILDS:
        build = matrix.resolve(word)
        spec = environments.Spec(build, pythons.default_python(build.release))
        environment = env_errors.prepare_or_record(spec, out, env_dir)
        if environment is None:
            (record,) = records.read(str(out / env_errors.env_error_file(spec)))[0]
            pytest.fail("%s did not install: %s\n%s" % (word, record["error_message"], record["installer_output"]))
        found[word] = environment
    return found


def worker(environment: environments.Environment, *args: str) -> None:
    command = environment.worker_command(*args, "--variant", environment.spec.build.variant.name, "--progress", "none")
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=ROOT, env=environment.worker_env())
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def loads(
    installed: Dict[str, environments.Environment], tmp_path_factory: pytest.TempPathFactory
) -> Tuple[Path, Dict[Tuple[str, str, str], dict]]:
    """Artifacts saved on both releases and loaded on both: records by (saved on, loaded on, mode)."""
    base = tmp_path_factory.mktemp("artifacts")
    for environment in installed.values():
        worker(environment, "run", "--cases", str(FIXTURES / "basic"), "--select", "add_one",
               "--artifacts", str(base / "art"), "--out", str(base / "records"))  # fmt: skip
    for environment in installed.values():
        worker(environment, "load", str(base / "art"), "--out", str(base / "loads"))
    found: List[dict] = []
    for path in sorted((base / "loads").glob("*.jsonl")):
        found.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())

    def short(version: str) -> str:
        return "2.13.0+cpu" if version.startswith("2.13.0") else version.split("+")[0]

    return base, {(short(r["saved_torch_version"]), short(r["torch_version"]), r["mode"]): r for r in found}


def test_each_release_loads_its_own_programs(loads: Tuple[Path, Dict[Tuple[str, str, str], dict]]) -> None:
    found = loads[1]
    assert found["2.13.0+cpu", "2.13.0+cpu", "strict"]["status"] == "pass"
    assert found["2.13.0+cpu", "2.13.0+cpu", "non-strict"]["status"] == "pass"
    assert found["2.1.2", "2.1.2", "strict"]["status"] == "pass"
    # torch 2.1 has no non-strict export: it saved no non-strict program.
    assert ("2.1.2", "2.1.2", "non-strict") not in found


def test_neither_release_loads_the_others_programs(loads: Tuple[Path, Dict[Tuple[str, str, str], dict]]) -> None:
    found = loads[1]
    across = {key: r for key, r in found.items() if key[0] != key[1]}
    assert set(across) == {
        ("2.13.0+cpu", "2.1.2", "strict"), ("2.13.0+cpu", "2.1.2", "non-strict"), ("2.1.2", "2.13.0+cpu", "strict"),
    }  # fmt: skip
    for record in across.values():
        assert record["status"] == "load-error", record
        assert record["error_type"] and record["load_s"] is not None
        assert record["saved_serializer_version"] != record["serializer_version"]
        # The message names both schema versions, as torch prints them (``saved (8, 20), loader 1``).
        saved, loading = (forensics.schema_tuple(record[k]) for k in ("saved_serializer_version", "serializer_version"))
        assert record["error_message"].endswith("[serializer schema: saved %s, loader %s]" % (saved, loading))
    # 2.1 reads only the zip layout: its KeyError for the missing `version` entry says why it applies.
    newer = across["2.13.0+cpu", "2.1.2", "strict"]
    assert newer["error_type"] == "KeyError"
    assert "(a pt2 archive, as torch.export.save writes from 2.8;" in newer["error_message"]


def test_the_report_tables_show_the_load_regression(loads: Tuple[Path, Dict[Tuple[str, str, str], dict]]) -> None:
    table = loads_table.table(store.load([str(loads[0] / "loads")]).loads)
    assert len(table) == 6
    moves = load_regressions.program_regressions(table)
    # 2.1.2 loads its own strict program, 2.13.0+cpu does not: one load regression, of that one program.
    assert [(m["case"], m["mode"], m["status_before"], m["status_after"]) for m in moves.to_dict("records")] == [
        ("add_one", "strict", "pass", "load-error")
    ]
    breaks = load_regressions.regressions(table)
    # PyPI's 2.1.2 names itself with its CUDA tag (2.1.2+cu121): the tables label a build as it names itself.
    (old,) = {r["torch_version"] for r in loads[1].values() if r["torch_version"].startswith("2.1.2")}
    assert [(b["saved"], b["before"], b["after"], b["programs"]) for b in breaks.to_dict("records")] == [
        (old, old, "2.13.0+cpu", 1)
    ]
    # Where 2.1.2's programs load and match: on 2.1.2 itself, the reach table's first row says.
    assert old in loads_table.reach(table)[0].passing
