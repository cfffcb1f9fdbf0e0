"""The run session's terminal: its progress bar, the runner's messages and one-line errors; the load options."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from matrix.contract import errors
from matrix.envs import logs

from conftest import ROOT


def test_a_progress_bar_shows_its_final_line(tmp_path: Path) -> None:
    assert logs.is_runner_line("\r\x1b[K[####......] 3/10 torch-2.5.1/strict/a\r\x1b[Kdone: pass 10")
    assert not logs.is_runner_line("\r\x1b[K")
    assert not logs.is_runner_line("/site-packages/torch/__init__.py:1: FutureWarning: warning: x")


def runner_messages() -> List[str]:
    """Every message the worker's commands write themselves, with sample values in its % placeholders."""
    found: List[str] = []
    sources = [
        (ROOT / "matrix" / "worker" / name).read_text()
        for name in ("batch.py", "runner.py", "loader.py", "progress.py")
    ]
    for node in (node for source in sources for node in ast.walk(ast.parse(source))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        named = isinstance(func, ast.Name) and func.id == "say"
        written = isinstance(func, ast.Attribute) and func.attr == "write" and ast.unparse(func.value) == "sys.stderr"
        if not (named or written):
            continue
        text = node.args[0]
        if isinstance(text, ast.BinOp) and isinstance(text.op, ast.Mod):
            text = text.left
        if isinstance(text, ast.Constant) and isinstance(text.value, str):
            sample = re.sub(r"%[-+ #0]*\d*(?:\.\d+)?([sdfr])", lambda m: "1" if m.group(1) in "df" else "x", text.value)
            found += [line for line in sample.split("\n") if line.replace("\r", "").replace("\x1b[K", "")]
    return found


def test_every_message_of_the_runner_reaches_the_terminal() -> None:
    messages = runner_messages()
    assert len(messages) >= 6, messages  # the scan still finds the runner's writes
    hidden = [m for m in messages if not logs.is_runner_line(m)]
    assert not hidden, "add these runner messages to matrix/envs/logs.py RUNNER_LINE: %s" % hidden


def test_the_one_line_errors_reach_the_terminal(capsys: pytest.CaptureFixture) -> None:
    def refuse() -> int:
        raise errors.UserError("--select nothing: no case matches")

    def interrupt() -> int:
        raise KeyboardInterrupt

    for body in (refuse, interrupt):
        errors.report_errors("export-matrix run", body)
        lines = [line for line in capsys.readouterr().err.splitlines() if line]
        assert lines and all(logs.is_runner_line(line) for line in lines), lines


def test_the_load_sessions_take_only_the_options_load_understands() -> None:
    from matrix.contract.requests import load_words

    given = ["--select", "cond_*", "exportdb/*", "--mode", "strict", "--force", "--tag", "torch.cond", "--timeout", "9"]
    assert load_words(given) == ["--select", "cond_*", "exportdb/*", "--force", "--timeout", "9"]
    assert load_words(["--trust", "--mode", "strict"]) == ["--trust"]
    assert load_words(["--device", "cuda", "--mode", "strict"]) == ["--device", "cuda"]  # loaded where they ran


def test_the_report_session_takes_its_own_words_and_leaves_run_options_to_run() -> None:
    import sys

    sys.path.insert(0, str(ROOT))
    import noxfile

    # `nox -s run load report -- --select ...`: the globs are run's and load's, the report reads results/.
    assert noxfile._report_words(["--select", "exportdb/*", "models/*", "--mode", "strict"]) == []
    assert noxfile._report_words(["results/mine", "--out", "/tmp/r", "--select", "a*"]) == [
        "results/mine", "--out", "/tmp/r"
    ]  # fmt: skip
    assert noxfile._report_words(["r1", "--baseline", "old", "--no-charts", "--title=T", "--jobs", "2", "--csv"]) == [
        "r1", "--baseline", "old", "--no-charts", "--title=T", "--csv"
    ]  # fmt: skip
    # ... and the run and load sessions leave the report's own options out: `-- --fail-on regression` is the report's.
    given = ["--select", "a*", "--fail-on", "regression", "--baseline=old", "--no-charts", "--csv", "--out", "res"]
    given += ["-j", "2"]
    assert noxfile._without_report_words(given) == ["--select", "a*", "--out", "res", "-j", "2"]


def test_the_quick_selection_runs_the_case_set_and_one_model_of_each_pack_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fnmatch
    import sys

    sys.path.insert(0, str(ROOT))
    import noxfile
    from matrix.contract.case import discover

    names = [info.name for info in discover([str(ROOT / "cases")])]
    chosen = [n for n in names if any(fnmatch.fnmatchcase(n, glob) for glob in noxfile.QUICK_CASES)]
    pack = [n for n in chosen if n.startswith("real_models/")]
    # Every case outside the pack, and one real model per library: torchvision, transformers, timm.
    assert set(chosen) == {n for n in names if not n.startswith("real_models/")} | set(pack)
    assert sorted(n.split("/")[1].split("_")[0] for n in pack) == ["hf", "timm", "tv"]
    assert all(glob in names or glob.endswith("/*") for glob in noxfile.QUICK_CASES)  # no sample lost to a rename
    # Options that choose cases win over the sample; others do not.
    assert noxfile._names_cases(["--select", "cond_*"]) and noxfile._names_cases(["--tag=torch.cond"])
    assert noxfile._names_cases(["--cases", "mine"]) and not noxfile._names_cases(["--mode", "strict"])
    for value, quick in ((None, True), ("quick", True), ("all", False), ("2.6 quick", False)):
        if value is None:
            monkeypatch.delenv(noxfile.SELECTION_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(noxfile.SELECTION_VARIABLE, value)
        assert (noxfile._chosen() == ["quick"]) is quick


def test_the_aoti_selection_runs_its_cases_with_the_stage_and_its_loads_compile_older_programs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    sys.path.insert(0, str(ROOT))
    import noxfile
    from matrix.contract.case import discover
    from matrix.contract.requests import LoadRequest, RunRequest
    from matrix.envs import releases

    infos = {info.name: info for info in discover([str(ROOT / "cases")])}
    chosen = noxfile.SELECTION_CASES["aoti"]
    assert len(chosen) >= 8 and set(chosen) <= set(infos)  # no sample lost to a rename
    tags = set().union(*(infos[name].tags for name in chosen))
    assert {"torch.cond", "torch.dynamic-shape", "torch.custom-op", "torch.mutation"} <= tags
    pack = {name.split("/")[1].split("_")[0] for name in chosen if name.startswith("real_models/")}
    assert pack == {"tv", "hf", "timm"}  # real models of each library, a ViT among them
    assert any("vit" in name for name in chosen)
    # Its releases: the newest patch of every series it names, from AOTInductor's first loader (2.3) on, none skipped
    # between 2.6 and its newest.
    matrix = releases.default_matrix()
    builds = matrix.select(["aoti"])
    minors = [build.release.minor for build in builds]
    assert all(build.release == matrix.series(build.release.minor)[-1] for build in builds)
    assert minors[0] == "2.3" and minors == sorted(minors, key=lambda m: tuple(map(int, m.split("."))))
    newest = int(minors[-1].split(".")[1])
    assert {"2.%d" % n for n in range(6, newest + 1)} <= set(minors) and newest >= 15
    # The sessions: chosen alone, the selection gives the run sessions its cases and the aoti stage, and the
    # load sessions --aoti; other words run every case with the default stages.
    for value, named in (("aoti", "aoti"), ("quick", "quick"), (None, "quick"), ("aoti 2.1", None), ("all", None)):
        if value is None:
            monkeypatch.delenv(noxfile.SELECTION_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(noxfile.SELECTION_VARIABLE, value)
        assert noxfile._named() == named
    run = RunRequest.from_argv([], out="o", select=chosen, **noxfile.SELECTION_RUN["aoti"])
    assert "aoti" in run.stages and set(noxfile.STAGES) <= set(run.stages)
    assert "--stages" in run.argv()
    given = RunRequest.from_argv(["--stages", "check"], out="o", **noxfile.SELECTION_RUN["aoti"])
    assert given.stages == ("check",)  # the options after -- win
    load = LoadRequest.from_argv([], artifacts=["a"], out="o", **noxfile.SELECTION_LOAD["aoti"])
    assert load.aoti and "--aoti" in load.argv() and load.aoti_from == "nearest-and-oldest"
    assert "quick" not in noxfile.SELECTION_RUN and "quick" not in noxfile.SELECTION_LOAD


class _Session:
    """What ``nox -s publish`` asks of its session to find the previous publication: a folder and a command."""

    venv_backend = "none"

    def __init__(self, tmp: Path, output: str) -> None:
        self.tmp, self.output, self.said, self.ran = tmp, output, [], []

    def create_tmp(self) -> str:
        return str(self.tmp)

    def run(self, *args: str, **_: object) -> str:
        self.ran.append(list(args))
        return self.output

    def warn(self, text: str) -> None:
        self.said.append(text)

    log = warn


def test_publish_compares_with_the_folder_the_previous_publication_was_copied_to(tmp_path: Path) -> None:
    import noxfile

    copied = tmp_path / "latest@69f785a"
    copied.mkdir()
    session = _Session(tmp_path, "a warning from the interpreter\n%s\n" % copied)
    assert noxfile._previous_publication(session, ["reports/latest", "--title", "T"]) == ["--baseline", str(copied)]
    # The record folders given, not the options' values, are what the report is built from.
    assert session.ran == [["python", "-m", "matrix.report.previous", noxfile.PUBLISHED_REPORT, str(tmp_path),
                            "reports/latest"]]  # fmt: skip
    # No earlier publication: said, and the report has no baseline.
    nothing = _Session(tmp_path, "")
    assert noxfile._previous_publication(nothing, ["results/latest"]) == []
    assert "no earlier publication" in nothing.said[0]


def test_the_test_environment_is_installed_with_its_bytecode_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    import noxfile

    monkeypatch.delenv(noxfile.TEST_TORCH_VARIABLE, raising=False)
    monkeypatch.setattr(noxfile, "_install_sources", lambda: ["--index", "file:///wheels"])
    installed: List[List[str]] = []

    class UvSession:
        venv_backend = "uv"

        def install(self, *args: str) -> None:
            installed.append(list(args))

    noxfile._test_environment(UvSession())  # type: ignore[arg-type]
    assert installed == [["--index", "file:///wheels", "--compile-bytecode", noxfile.DEFAULT_TEST_TORCH, ".[test]"]]
    assert noxfile.install.COMPILE_BYTECODE == "--compile-bytecode"  # uv's own spelling
    # pip compiles at install by itself, and takes no such flag.
    UvSession.venv_backend = "virtualenv"
    installed.clear()
    noxfile._test_environment(UvSession())  # type: ignore[arg-type]
    assert installed == [[noxfile.DEFAULT_TEST_TORCH, ".[test]"]]


def test_a_load_session_loads_each_devices_programs_where_its_build_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses
    import json
    import sys

    sys.path.insert(0, str(ROOT))
    import noxfile
    from matrix.contract import layout
    from matrix.envs import environments

    out = tmp_path / "results"
    for name, device in (("add_one", "cpu"), ("add_one@cuda", "cuda")):  # what a CPU run and a GPU run kept
        folder = out / noxfile.ARTIFACTS / layout.env_folder("2.11.0", "cpu", "3.11") / "strict" / name
        folder.mkdir(parents=True)
        meta = dict(case="add_one", mode="strict", torch_version="2.11.0", variant="cpu", python="3.11",
                    device=device, format_version=layout.FORMAT_VERSION, files=[])  # fmt: skip
        (folder / layout.META).write_text(json.dumps(meta), encoding="utf-8")

    @dataclasses.dataclass(frozen=True)
    class Spec:
        dependency_set: str = ""
        name: str = "torch-2.12.0_cpu_py3.11"

    class Environment:
        spec = Spec()

        def worker_command(self, request: Any) -> List[str]:
            return request.argv()

        def worker_env(self) -> Dict[str, str]:
            return {}

    ran: List[Tuple[List[str], str]] = []
    asked: List[bool] = []
    monkeypatch.setattr(noxfile, "_environment", lambda *args: Environment())
    monkeypatch.setattr(noxfile, "_run_logged", lambda session, command, env, log: ran.append((command, log.name)))
    monkeypatch.delenv(noxfile.SELECTION_VARIABLE, raising=False)

    def load(posargs: List[str], gpu: bool) -> List[Tuple[List[str], str]]:
        monkeypatch.setattr(environments, "cuda_available", lambda environment: asked.append(gpu) or gpu)
        session = _Session(tmp_path, "")
        session.posargs = ["--out", str(out), *posargs]  # type: ignore[attr-defined]
        ran.clear()
        noxfile.load(session, torch="2.12.0", variant="cpu")
        return [(["--device cuda" in " ".join(command)], log) for command, log in ran]  # type: ignore[misc]

    # Where the build can use a GPU: the CPU's programs, then the GPU's, each in its own log.
    assert load([], gpu=True) == [
        ([False], "load_torch-2.12.0_cpu_py3.11.log"), ([True], "load_torch-2.12.0_cpu_py3.11_cuda.log")
    ]  # fmt: skip
    # Where it cannot: the CPU's alone, and the session says why the GPU's are not loaded.
    session_said: List[str] = []
    monkeypatch.setattr(_Session, "log", lambda self, text: session_said.append(text))
    assert load([], gpu=False) == [([False], "load_torch-2.12.0_cpu_py3.11.log")]
    assert any("programs saved on cuda are not loaded here" in said for said in session_said)
    # A device named after -- is the one loaded, and no GPU is asked for.
    asked.clear()
    assert load(["--device", "cuda"], gpu=False) == [([True], "load_torch-2.12.0_cpu_py3.11_cuda.log")]
    assert asked == []
