"""``bisect --bad nightly``: the nightlies a stand-in index holds, searched for the first that changes a case.

The index is a folder of wheels read as PyTorch's nightly index is read (``file://``, as the channel tests do).
The installer is a stand-in too: it makes environments that name the nightly they hold, as uv's would, so the
environments' reuse, markers and env-error records are the real ones; the worker's run is the stand-in that
writes what each nightly gives (its cell and its environment record with a git version).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
from pathlib import Path
from typing import Callable, List, Optional, Sequence

import pytest

from matrix import cli
from matrix.commands import bisect, nightly_range, probe
from matrix.contract import records
from matrix.contract.requests import RunRequest
from matrix.envs import environments, install, releases
from matrix.envs.install import Sources

from conftest import CURRENT, FIXTURES, environment_record, make_cell, make_wheel, write

MATRIX = releases.default_matrix()
NEWEST = MATRIX.releases[-1]  # the nightlies are its next series' (after its cut) or its own (before)
NEXT = "%s.%d" % (NEWEST.minor.split(".")[0], int(NEWEST.minor.split(".")[1]) + 1)
NIGHTLY = MATRIX.channel("nightly")
CASE = str(FIXTURES / "basic" / "add_one.py")
START = datetime.date(2026, 1, 1)


def days(count: int, start: datetime.date = START) -> List[datetime.date]:
    return [start + datetime.timedelta(days=n) for n in range(count)]


def version(day: datetime.date, series: str = NEXT) -> str:
    return "%s.0.dev%s+cpu" % (series, day.strftime("%Y%m%d"))


def git_of(torch: str) -> str:
    """A stand-in build's commit: forty hex digits that differ for each nightly."""
    return torch.split(".dev", 1)[1][:8].ljust(40, "0")


def stand_in_index(root: Path, versions: Sequence[str]) -> str:
    """A PEP 503 index of these torch wheels (and a CUDA build and a sdist it must pass over), as a file:// URL."""
    names = [make_wheel(root / "files", "torch", v).name for v in [*versions, version(START, NEXT)[:-4] + "+cu130"]]
    links = "".join('<a href="../../files/%s">%s</a>\n' % (n, n) for n in [*names, "torch-9.9.tar.gz"])
    write(root / "simple" / "torch" / "index.html", links)
    return (root / "simple").as_uri()


class Installer:
    """Installs the nightly a spec names into a folder that says so; the versions in ``broken`` fail to install."""

    name = "stand-in"

    def __init__(self, broken: Sequence[str] = ()) -> None:
        self.broken = set(broken)
        self.installed: List[str] = []

    def create(self, path: Path, interpreter: str) -> None:
        path.mkdir(parents=True)

    def install(self, python: Path, requirements: Sequence[str], sources: Sources, constraints: Sequence[str] = ()):
        torch = requirements[0].split("==", 1)[1]
        if torch in self.broken:
            raise install.classify("error: Failed to fetch: %s: 404" % torch, "install")
        python.parent.mkdir(parents=True, exist_ok=True)
        python.write_text(torch)  # what the stand-in interpreter says it has: see ``installed``
        site = python.parent.parent / "lib" / ("python" + CURRENT) / "site-packages"
        (site / ("torch-%s.dist-info" % torch)).mkdir(parents=True)
        self.installed.append(torch)
        return ""

    @staticmethod
    def installed(python: Path) -> str:
        """``environments.installed_torch`` for a stand-in environment, without starting its interpreter."""
        return python.read_text() if python.is_file() else ""


class World:
    """The stand-in index, environments folder and installer, and what each nightly gives."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, versions: Sequence[str]) -> None:
        self.envs = tmp_path / "envs"
        self.index = stand_in_index(tmp_path / "index", versions)
        self.installer = Installer()
        self.gives: Callable[[str], str] = lambda torch: "pass"
        self.graph: Callable[[str], str] = lambda torch: "aaaa"  # the graph hash each nightly exports
        monkeypatch.setenv(NIGHTLY.variant("cpu").env, self.index)
        monkeypatch.setenv(environments.ENV_DIR_VARIABLE, str(self.envs))
        monkeypatch.setenv("EXPORT_MATRIX_PYTHON", CURRENT)
        monkeypatch.setattr(environments, "installer", lambda: self.installer)
        monkeypatch.setattr(environments, "installed_torch", Installer.installed)
        monkeypatch.setattr(probe, "run_case", self.run)

    def run(self, command: List[str], env: object, request: RunRequest, verbose: bool = False) -> Optional[str]:
        """The worker's run in a stand-in environment: its cell, and its environment record with the git version."""
        marker = json.loads((Path(command[0]).parent.parent / environments.MARKER).read_text())
        torch, out = marker["torch"], Path(request.out)
        status = self.gives(torch)
        error = {} if status == "pass" else {"error_type": "torch._dynamo.exc.Unsupported", "error_message": "boom"}
        cell = make_cell(
            torch, "add_one", status, variant="nightly-cpu", python=CURRENT, graph_hash=self.graph(torch), **error
        )
        environment = dict(environment_record(torch), variant="nightly-cpu", torch_git_version=git_of(torch))
        with records.Writer(str(out / "records.jsonl")) as writer:
            writer.write(environment)
            writer.write(cell)
        return None

    def breaks_on(self, day: datetime.date) -> None:
        self.gives = lambda torch: "fail" if torch >= version(day)[: -len("+cpu")] else "pass"

    def bisect(self, *words: str) -> int:
        return cli.main(["bisect", CASE, *words])


def answer(captured: str) -> str:
    """The last line printed: the answer."""
    return captured.strip().splitlines()[-1]


@pytest.mark.parametrize("after_the_gate, installs", [(True, 7), (False, 8)])
def test_a_day_found_among_60_nightlies_with_at_most_7_installs_after_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, after_the_gate: bool, installs: int
) -> None:
    nightlies = [version(day) for day in days(60)]
    world = World(tmp_path, monkeypatch, nightlies)
    broken = days(60)[37]
    world.breaks_on(broken)
    if after_the_gate:  # `check --torch nightly` installed the newest nightly: the search reuses it
        newest = environments.Spec(MATRIX.pinned(MATRIX.resolve("nightly"), nightlies[-1]), CURRENT)
        environments.prepare(newest, log=lambda _: None)
        world.installer.installed.clear()

    assert world.bisect("--good", "nightly:%s" % START, "--bad", "nightly") == 0
    out = capsys.readouterr().out
    good, bad = nightlies[36], nightlies[37]
    assert answer(out) == (
        "first bad nightly: %s %s (git %s): fail (Unsupported: boom); last good: %s %s (git %s): pass;"
        " commits: https://github.com/pytorch/pytorch/compare/%s...%s; %d environments installed, %d probes"
        % (broken, bad, git_of(bad), days(60)[36], good, git_of(good), git_of(good), git_of(bad),
           len(world.installer.installed), sum(line.startswith("  2026-") for line in out.splitlines()))
    )  # fmt: skip
    assert len(world.installer.installed) == installs  # the two ends and six halvings, less what was there
    assert "over 60 nightlies of the nightly-cpu index" in out

    # Again: every environment it needs is there, and nothing is installed.
    world.installer.installed.clear()
    assert world.bisect("--good", "nightly:%s" % START, "--bad", "nightly") == 0
    assert answer(capsys.readouterr().out).endswith("; 0 environments installed, 8 probes")
    assert world.installer.installed == []


def test_a_release_starts_at_its_branch_cut_and_a_day_between_nightlies_ends_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    before_cut = [version(day, NEWEST.minor) for day in days(5)]  # main still numbered the release's series
    after_cut = [version(day) for day in days(20, START + datetime.timedelta(days=5))]
    missing = START + datetime.timedelta(days=30)  # no nightly that day: the last one is the day before
    world = World(tmp_path, monkeypatch, [*before_cut, *after_cut, version(missing + datetime.timedelta(days=1))])
    world.breaks_on(START + datetime.timedelta(days=12))

    found = bisect.plan_search(bisect.BisectOptions(CASE, good=NEWEST.minor, bad="nightly:%s" % missing))
    assert [spec.build.torch_version for spec in found.specs] == after_cut
    assert found.notes == (
        "%s's branch cut: the first nightly numbered %s or later is %s of %s"
        % (NEWEST.version, NEXT, after_cut[0], START + datetime.timedelta(days=5)),
        "no nightly of %s on the index: the bad end is the one before it, %s"
        % (missing, missing - datetime.timedelta(days=6)),
    )
    assert world.installer.installed == []  # planning installs nothing

    assert world.bisect("--good", NEWEST.minor, "--bad", "nightly:%s" % missing) == 0
    assert answer(capsys.readouterr().out).startswith(
        "first bad nightly: %s %s" % (START + datetime.timedelta(days=12), after_cut[7])
    )


def test_an_end_gone_from_the_index_starts_at_its_oldest_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    nightlies = [version(day) for day in days(10)]
    World(tmp_path, monkeypatch, nightlies)
    older = [r for r in MATRIX.releases if r.minor != NEWEST.minor][-1].version  # its cut made NEWEST's series
    found = bisect.plan_search(bisect.BisectOptions(CASE, good=older, bad="nightly"))
    assert [s.build.torch_version for s in found.specs] == nightlies
    (note,) = found.notes
    assert note.startswith(
        "the index no longer reaches back to %s's branch cut (its oldest nightly, %s of %s"
        % (older, nightlies[0], START)
    )
    gone = START - datetime.timedelta(days=40)
    found = bisect.plan_search(bisect.BisectOptions(CASE, good="nightly:%s" % gone, bad="nightly"))
    assert [s.build.torch_version for s in found.specs] == nightlies
    assert found.notes == (
        "%s is no longer on the index (it holds %s to %s): starting from its oldest nightly"
        % (gone, START, days(10)[-1]),
    )


def test_a_nightly_that_fails_to_install_is_gone_around_and_named_where_it_hides_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    nightlies = [version(day) for day in days(9)]
    world = World(tmp_path, monkeypatch, nightlies)
    world.breaks_on(days(9)[4])
    world.installer.broken = {nightlies[4]}  # the first bad one cannot be had: the answer is a range
    assert world.bisect("--good", "nightly:%s" % START, "--bad", "nightly:%s" % days(9)[-1]) == 0
    out = capsys.readouterr().out
    assert "  %s %s skipped  its environment could not be installed" % (days(9)[4], nightlies[4]) in out
    assert (
        "not installed, and any of them may be the first unlike %s %s: %s %s\n"
        % (START, nightlies[0], days(9)[4], nightlies[4])
        in out
    )
    assert answer(out).startswith("first bad nightly: %s %s" % (days(9)[5], nightlies[5]))
    assert "last good: %s %s" % (days(9)[3], nightlies[3]) in answer(out)
    assert nightlies[4] not in world.installer.installed


def test_on_hash_finds_the_nightly_whose_graph_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    nightlies = [version(day) for day in days(12)]
    world = World(tmp_path, monkeypatch, nightlies)
    world.graph = lambda torch: "bbbb" if torch >= nightlies[5] else "aaaa"  # every nightly passes
    assert world.bisect("--good", "nightly:%s" % START, "--bad", "nightly", "--on", "hash") == 0
    assert answer(capsys.readouterr().out).startswith(
        "first bad nightly: %s %s (git %s): bbbb; last good: %s %s (git %s): aaaa;"
        % (days(12)[5], nightlies[5], git_of(nightlies[5]), days(12)[4], nightlies[4], git_of(nightlies[4]))
    )
    assert world.bisect("--good", "nightly:%s" % START, "--bad", "nightly") == 1  # on status: nothing changed


def test_ends_that_agree_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    nightlies = [version(day) for day in days(6)]
    world = World(tmp_path, monkeypatch, nightlies)
    assert world.bisect("--good", "nightly:%s" % START, "--bad", "nightly") == 1
    assert answer(capsys.readouterr().out) == (
        "no change: status gives pass at both ends (%s %s and %s %s); 2 environments installed, 2 probes"
        % (START, nightlies[0], days(6)[-1], nightlies[-1])
    )


@pytest.mark.parametrize(
    "words, message",
    [
        (["--good", "nightly:2026-01-02", "--bad", "nightly:2026-13-01"], "a dated nightly is nightly:YYYY-MM-DD"),
        (["--good", "nightly:2026-01-05", "--bad", "nightly:2026-01-02"], "must be newer than --good"),
        (["--good", "nightly", "--bad", "nightly"], "is the newest nightly; give a day"),
        (["--good", "2.5.0", "--bad", "nightly:2026-03-01"], "no nightly of that day on the index"),
        (["--good", "nightly:2026-01-03", "--bad", "nightly:2026-01-03"], "must be newer than --good"),
        (["--good", "rc", "--bad", "nightly"], "a nightly bisection's good end is a nightly day or a release"),
        (["--bad", "nightly"], "give --good"),
        (["--good", "2.15.0", "--bad", "nightlyy"], "--bad: unknown torch selection word 'nightlyy'; known words: "),
        (["--good", "nightly:2026-01-02", "--bad", "nightly+cu999"], "the nightly channel has no cu999 index"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, words: List[str], message: str
) -> None:
    world = World(tmp_path, monkeypatch, [version(day) for day in days(6)])
    assert world.bisect(*words) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and err.startswith("export-matrix bisect: error: ")
    assert world.installer.installed == []


def test_an_index_that_cannot_be_reached_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    world = World(tmp_path, monkeypatch, [version(day) for day in days(3)])
    monkeypatch.setenv(NIGHTLY.variant("cpu").env, (tmp_path / "nowhere").as_uri())
    assert world.bisect("--good", "nightly:%s" % START, "--bad", "nightly") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the index answers nothing" in err and "nowhere" in err
    assert world.installer.installed == []


def test_the_compare_link_needs_both_commits() -> None:
    assert nightly_range.compare_link("a" * 40, "b" * 40) == (
        "https://github.com/pytorch/pytorch/compare/%s...%s" % ("a" * 40, "b" * 40)
    )
    assert nightly_range.compare_link(None, "b") is None


def test_the_gate_offers_a_search_for_each_cell_a_nightly_broke_and_none_for_a_release_candidate() -> None:
    from matrix.records.candidate import Verdict

    broken = (
        {"case": "my model", "mode": "strict", "status_before": "pass", "status_after": "fail"},
        {"case": "my model", "mode": "non-strict", "status_before": "pass", "status_after": "pass"},  # a stage
    )
    nightly = Verdict("2.16.0.dev20260115+cpu", "nightly-cpu", "2.15.0+cpu", "cpu", 2, broken, (), ())
    rc = Verdict("2.16.0+cpu", "test-cpu", "2.15.0+cpu", "cpu", 2, broken, (), ())
    paths = {"my model": "models/my model.py"}
    assert nightly_range.bisect_commands([nightly, rc], paths, ["numpy<2"]) == [
        "export-matrix bisect 'models/my model.py' --good 2.15.0 --bad nightly:2026-01-15 --mode strict"
        " --variant cpu --with 'numpy<2'"
    ]
    # The command is one bisect reads: its ends are a release and a day of the nightly index.
    parser = argparse.ArgumentParser()
    bisect.configure(parser)
    (command,) = nightly_range.bisect_commands([nightly], paths)
    read = parser.parse_args(shlex.split(command)[2:])
    bad, good = nightly_range.ends(MATRIX, read.good, read.bad, read.variant)
    assert (bad.date, bad.variant.name, good) == (datetime.date(2026, 1, 15), "nightly-cpu", MATRIX.release("2.15.0"))
