"""The bisection: the pure search with fake probes (counting them), and the command's planning."""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from matrix import cli
from matrix.commands import bisect, probe
from matrix.commands.bisect import BisectError, Skip, search
from matrix.contract import schema
from matrix.contract.errors import UserError
from matrix.contract.options import from_namespace
from matrix.contract.requests import RunRequest
from matrix.envs import env_errors, environments, pythons, releases

from conftest import FIXTURES, make_cell


class Probe:
    """A fake probe: 'pass' before the change, 'fail' from it on; counts its calls."""

    def __init__(self, versions: Sequence[Any], change: int, skip: Sequence[Any] = ()) -> None:
        self.index = {v: i for i, v in enumerate(versions)}
        self.change = change
        self.skip = set(skip)
        self.calls: Counter = Counter()

    def __call__(self, version: Any) -> str:
        self.calls[version] += 1
        if version in self.skip:
            raise Skip("environment broken")
        return "pass" if self.index[version] < self.change else "fail"


@pytest.mark.parametrize("count", [2, 3, 4, 7, 16, 26, 33])
def test_finds_every_change_point_in_logarithmic_probes(count: int) -> None:
    versions = ["v%02d" % i for i in range(count)]
    bound = 2 + math.ceil(math.log2(count - 1)) if count > 2 else 2
    for change in range(1, count):
        probe = Probe(versions, change)
        outcome = search(versions, probe)
        assert (outcome.last_good, outcome.first_bad) == (versions[change - 1], versions[change])
        assert (outcome.good_value, outcome.bad_value) == ("pass", "fail")
        assert outcome.probes == sum(probe.calls.values()) <= bound
        assert max(probe.calls.values()) == 1  # no version is probed twice


def test_preferring_installed_versions_reuses_them_and_stays_logarithmic() -> None:
    versions = list(range(26))
    installed = {3, 9, 11, 17}
    bound = 2 + math.ceil(math.log(25) / math.log(1.5))
    for change in range(1, 26):
        probe = Probe(versions, change)
        outcome = search(versions, probe, prefer=lambda v: v in installed)
        assert outcome.first_bad == change
        assert outcome.probes <= bound
    probe = Probe(versions, 20)
    outcome = search(versions, probe, prefer=lambda v: v in installed)
    # 12 is the midpoint of 0..25; 11 is installed and central, so it goes first.
    assert [s.version for s in outcome.steps][:3] == [0, 25, 11]


def test_a_preferred_version_outside_the_middle_third_is_not_taken() -> None:
    probe = Probe(list(range(10)), 5)
    outcome = search(list(range(10)), probe, prefer=lambda v: v == 1)
    assert outcome.steps[2].version == 4  # the midpoint of 0..9 (4.5) rounded down, not the installed 1


def test_skipped_versions_are_gone_around_and_reported_when_they_hide_the_answer() -> None:
    versions = list(range(9))
    probe = Probe(versions, 5, skip=[4, 5])
    outcome = search(versions, probe)
    assert (outcome.last_good, outcome.first_bad) == (3, 6)
    assert outcome.untested == (4, 5)
    assert [s.verdict for s in outcome.steps if s.version in (4, 5)] == ["skipped", "skipped"]
    clean = search(versions, Probe(versions, 7, skip=[4]))
    assert (clean.first_bad, clean.untested) == (7, ())


def test_ends_that_agree_mean_no_change_in_two_probes() -> None:
    versions = list(range(8))
    outcome = search(versions, Probe(versions, 99))
    assert not outcome.changed and outcome.first_bad is None and outcome.probes == 2


@pytest.mark.parametrize("skip, end", [([0], "good"), ([7], "bad")])
def test_an_end_that_cannot_be_probed_stops_the_search(skip: List[int], end: str) -> None:
    with pytest.raises(BisectError, match="cannot probe the %s end" % end):
        search(list(range(8)), Probe(list(range(8)), 3, skip=skip))


def test_refuses_too_few_or_duplicate_versions() -> None:
    with pytest.raises(BisectError, match="at least two"):
        search(["2.4.1"], lambda v: "pass")
    with pytest.raises(BisectError, match="duplicates"):
        search(["2.4.1", "2.4.1"], lambda v: "pass")


def test_works_over_nightly_dates_and_any_value_type() -> None:
    nightlies = ["2.10.0.dev202510%02d" % day for day in range(1, 31)]
    hashes: Dict[str, str] = {v: ("aaaa" if v < "2.10.0.dev20251017" else "bbbb") for v in nightlies}
    seen: List[str] = []
    outcome = search(nightlies, hashes.__getitem__, on_step=lambda step: seen.append(step.verdict))
    assert outcome.first_bad == "2.10.0.dev20251017"
    assert seen[:2] == ["good", "bad"] and len(seen) == outcome.probes


ADD_ONE = probe.validate_case(str(FIXTURES / "basic" / "add_one.py"))


def args(**values: Any) -> bisect.BisectOptions:
    parser = argparse.ArgumentParser()
    bisect.configure(parser)
    namespace = parser.parse_args([str(FIXTURES / "basic" / "add_one.py")])
    for key, value in values.items():
        setattr(namespace, key, value)
    return from_namespace(bisect.BisectOptions, namespace)


def test_plan_takes_every_patch_between_the_ends_for_one_python() -> None:
    specs, python = bisect.plan(args(good="2.5.1", bad="2.9.1", python="3.11"))
    assert [s.build.torch_version for s in specs] == ["2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1"]
    assert python == "3.11" and {s.python for s in specs} == {"3.11"}
    cpu, _ = bisect.plan(args(versions=["2.13.0", "2.14.0"], variant="cpu", python="3.11"))
    assert [s.build.torch_version for s in cpu] == ["2.13.0+cpu", "2.14.0+cpu"]


def test_plan_picks_a_python_every_release_in_the_range_has() -> None:
    specs, python = bisect.plan(args(good="2.1.2", bad="2.9.1"))
    shared = {"3.10", "3.11"}  # 2.1 stops at 3.11, 2.9 starts at 3.10
    assert python in shared
    assert python == (pythons.current_python() if pythons.current_python() in shared else "3.11")


@pytest.mark.parametrize(
    "values, message",
    [
        ({"good": "2.5.1"}, "give --good and --bad"),
        ({"good": "2.9.1", "bad": "2.5.1"}, "must be older"),
        ({"good": "2.5.7", "bad": "2.9.1"}, "unknown torch release 2.5.7"),
        ({"versions": ["2.9.1", "2.5.1"]}, "oldest first"),
        ({"versions": ["2.5.1", "2.9.1"], "good": "2.5.1"}, "not both"),
        ({"good": "2.1.0", "bad": "2.1.2", "python": "3.13"}, "fewer than two"),
        ({"good": "2.1.0", "bad": "2.9.1", "variant": "rocm"}, "unknown variant"),
        ({"versions": ["2.13.0+cpu", "2.14.0+cpu"]}, "2.13.0\\+cpu is not a build of the pypi variant"),
    ],
)
def test_plan_errors(values: Dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        bisect.plan(args(**values))


@pytest.mark.parametrize(
    "cell, on, expected",
    [
        ({"status": "pass", "graph_hash": "ab12"}, "status", "pass"),
        ({"status": "pass", "graph_hash": "ab12"}, "hash", "ab12"),
        ({"status": "fail", "graph_hash": None}, "hash", "no graph (fail)"),
        (None, "status", None),
    ],
)
def test_value_of(cell: Optional[Dict[str, Any]], on: str, expected: Any) -> None:
    assert bisect.value_of(cell, on) == expected


def test_command_refuses_bad_input_with_exit_status_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["bisect", str(tmp_path / "nope.py"), "--good", "2.5.1", "--bad", "2.9.1"]) == 2
    assert "export-matrix bisect: error: " in capsys.readouterr().err
    assert cli.main(["bisect", str(FIXTURES / "basic" / "add_one.py"), "--good", "2.5.1", "--bad", "2.4.0"]) == 2
    assert "must be older" in capsys.readouterr().err
    assert cli.main(["bisect", str(FIXTURES / "basic" / "add_one.py"), "--timeout", "nan"]) == 2
    assert "--timeout nan" in capsys.readouterr().err


class FakeEnvironment:
    reused = True

    def worker_command(self) -> List[str]:
        return ["python", "-m", "matrix.worker"]

    def worker_env(self) -> Dict[str, str]:
        return {}


def test_a_probe_compares_the_cell_that_schema_recency_says_wins_not_the_last_one_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    later = make_cell("2.5.1", "add_one", "pass", finished_at="2025-01-01T11:00:00Z")
    earlier = make_cell("2.5.1", "add_one", "fail", finished_at="2025-01-01T12:00:00+02:00")  # sorts last as text
    assert max([later, earlier], key=schema.recency) is later
    asked: List[Sequence[str]] = []

    def fake_run(command: Any, env: Any, request: RunRequest, *rest: Any) -> Optional[str]:
        modes, out = list(request.modes), Path(request.out)
        asked.append(modes)
        out.mkdir(parents=True, exist_ok=True)
        (out / "torch-2.5.1_pypi_py3.11.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (later, earlier)))
        return None

    monkeypatch.setattr(env_errors, "prepare_or_record", lambda spec, out, *rest, **options: FakeEnvironment())
    monkeypatch.setattr(probe, "run_case", fake_run)
    spec = environments.Spec(releases.default_matrix().resolve("2.5.1"), "3.11")
    assert bisect.probe_cell(spec, args(), ADD_ONE, tmp_path) == later
    assert asked == [["strict"]]


def test_a_release_without_a_cell_to_compare_is_skipped_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = environments.Spec(releases.default_matrix().resolve("2.5.1"), "3.11")
    monkeypatch.setattr(env_errors, "prepare_or_record", lambda spec, out, *rest, **options: FakeEnvironment())
    monkeypatch.setattr(probe, "run_case", lambda *a: "export-matrix run exited with 1: boom")
    with pytest.raises(Skip, match="exited with 1: boom"):
        bisect.probe_cell(spec, args(), ADD_ONE, tmp_path)

    def fail(spec: environments.Spec, out: Path, *rest: Any, **options: Any) -> None:
        out.mkdir(parents=True, exist_ok=True)
        error = {"schema_version": schema.SCHEMA_VERSION, "kind": "env-error", "error_message": "no wheels"}
        (out / "env-error.jsonl").write_text(json.dumps(error) + "\n")

    monkeypatch.setattr(env_errors, "prepare_or_record", fail)
    with pytest.raises(Skip, match="could not be installed"):
        bisect.probe_cell(spec, args(), ADD_ONE, tmp_path)
