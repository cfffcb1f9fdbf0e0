"""Sessions of torch-export-matrix: run the matrix, report on it, check a case, test the project.

The `run` sessions come from matrix/envs/releases.toml: one per (torch release, wheel variant).
By default they are a handful spread over the releases; EXPORT_MATRIX_TORCH widens or
changes the list (`all` for the full matrix, or words such as `2.4 2.5.1+cpu latest`), and
names channels: `nightly` (its newest build), `nightly:2026-01-15`, `rc`, `nightly+cu130`:

    nox -s run                                   # the quick selection
    nox -s "run(torch='2.4.1', variant='pypi')"  # one environment
    EXPORT_MATRIX_TORCH=all nox -t cpu           # every CPU build of the full matrix
    EXPORT_MATRIX_TORCH="latest nightly" nox -s run   # the newest release beside today's nightly
    nox -s run -- --select 'cond_*' --mode strict
    nox -l --json -s run                         # the session list, e.g. as a CI job matrix
    EXPORT_MATRIX_TORCH=aoti nox -s run load report   # the AOTInductor selection: cases, releases, cross compiles

Cases whose PEP 723 block names packages run in an environment per dependency set beside the
release's own; EXPORT_MATRIX_WITH="transformers==4.57.1" adds requirements to every case.

Records go to results/latest/ and `nox -s report` writes reports/local/, both git-ignored;
`nox -s publish -- RECORD_DIR...` alone writes the committed report, reports/latest/.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Type, Union

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))  # the sessions are thin wrappers around the project's own modules

from matrix.contract.requests import STAGES, LoadRequest, RequestError, RunRequest, load_words  # noqa: E402
from matrix.envs import env_errors, environments, install, logs, pipconfig, pythons, releases, removal, sets  # noqa: E402

Request = Union[RunRequest, LoadRequest]

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests", "lint"]

SELECTION_VARIABLE = "EXPORT_MATRIX_TORCH"
OUT_VARIABLE = "EXPORT_MATRIX_OUT"
TEST_TORCH_VARIABLE = "EXPORT_MATRIX_TEST_TORCH"
WITH_VARIABLE = "EXPORT_MATRIX_WITH"
DEFAULT_OUT = "results/latest"
ARTIFACTS = "artifacts"  # under the record folder: the programs each run session saved
DEFAULT_TEST_TORCH = "torch==2.13.0"
RECORDS = "results"
LOCAL_REPORT = "reports/local"
PUBLISHED_REPORT = "reports/latest"


# What the quick selection runs beside its releases: the case set, and the smallest model of each
# library of the real-model pack (its code paths, at a fraction of the pack's hour). Any other
# release selection (EXPORT_MATRIX_TORCH=all: the full matrix) runs every case; --select, --tag or
# --cases after -- choose the cases themselves.
QUICK_CASES = (
    "exportdb/*", "models/*", "tutorial/*", "strict_nonstrict/*",
    "real_models/tv_resnet18", "real_models/hf_gpt2", "real_models/timm_resnet10t",
)  # fmt: skip
# What the aoti selection runs (EXPORT_MATRIX_TORCH=aoti, its releases in matrix/envs/releases.toml): small cases
# of control flow, dynamic shapes, a custom op and mutation, and real models, with the aoti stage; its load
# sessions compile the programs saved on the newest older release and on the oldest of its serializer epoch
# (`load --aoti --aoti-from nearest-and-oldest`: about 2 compiles per program and release, where every older
# release would make N/2).
# A compile takes 7-36 s on 2 cores.
AOTI_CASES = (
    "tutorial/cond_data_dependent", "exportdb/cond_predicate", "models/dynamic_batch_mlp",
    "tutorial/custom_op_fake_kernel", "models/buffer_counter_mutation", "exportdb/user_input_mutation",
    "real_models/tv_resnet18", "real_models/hf_bert", "real_models/hf_llama", "real_models/timm_vit_tiny",
)  # fmt: skip
# The release selections with cases of their own (any other runs every case), and what else each asks of the
# run and load sessions.
SELECTION_CASES = {"quick": QUICK_CASES, "aoti": AOTI_CASES}
SELECTION_RUN: Dict[str, Dict[str, Any]] = {"aoti": {"stages": STAGES + ("aoti",)}}
SELECTION_LOAD: Dict[str, Dict[str, Any]] = {"aoti": {"aoti": True, "aoti_from": "nearest-and-oldest"}}


def _chosen() -> List[str]:
    return releases.words(os.environ.get(SELECTION_VARIABLE)) or ["quick"]


def _named() -> Optional[str]:
    """The named selection chosen alone (``quick``, ``aoti``), whose cases and options the sessions use; else None."""
    chosen = _chosen()
    return chosen[0] if len(chosen) == 1 and chosen[0] in SELECTION_CASES else None


def _builds() -> List[releases.Build]:
    chosen = _chosen()
    try:
        return releases.default_matrix().select(chosen)
    except releases.ReleaseError as exc:  # bad input: one line and the usage status, before nox lists anything
        print("noxfile.py: %s=%s: %s" % (SELECTION_VARIABLE, " ".join(chosen), exc), file=sys.stderr)
        sys.exit(exc.exit_code)


def _params() -> List[nox.param]:
    """One parameter set per build, tagged with its variant family, `latest`, `quick` and its channel.

    A channel's build is named by its word (``torch='nightly'``, ``variant='nightly-cpu'``): which
    build that is, its index says when the session installs it.
    """
    builds = _builds()
    newest: Dict[str, Any] = {}  # family -> the key of its newest release
    for build in builds:
        family = build.variant.family
        if build.variant.channel is None and (family not in newest or build.release.key > newest[family]):
            newest[family] = build.release.key
    quick = releases.default_matrix().select(["quick"])
    params: List[nox.param] = []
    for build in builds:
        tags = [build.variant.family]
        if build.variant.channel is not None:
            tags.append(build.variant.channel)
        elif build.release.key == newest[build.variant.family]:
            tags.append("latest")
        if build in quick:
            tags.append("quick")
        params.append(nox.param(build.release.version, build.variant.name, tags=tags))
    return params


def _install_sources() -> List[str]:
    """pip's configuration as uv flags, so a session's `uv pip install` sees the same indexes as pip."""
    return install.Sources(pipconfig.current()).uv_args()


def _install(session: nox.Session, *requirements: str) -> None:
    if session.venv_backend == "none":
        return  # `nox --no-venv`: the running interpreter is expected to have them already
    if session.venv_backend == "uv":
        session.install(*_install_sources(), *requirements)
    else:
        session.install(*requirements)


def _with() -> List[str]:
    """EXPORT_MATRIX_WITH: requirements added to every case (``--with``), separated by spaces."""
    return (os.environ.get(WITH_VARIABLE) or "").split()


def _out_dir(posargs: List[str]) -> str:
    """The record folder: `--out DIR` after --, else EXPORT_MATRIX_OUT, else results/latest."""
    default = os.environ.get(OUT_VARIABLE) or DEFAULT_OUT
    try:  # run and load read --out alike
        return LoadRequest.from_argv(load_words(posargs), artifacts=[], out=default).out
    except RequestError:
        return default


def _worker_command(
    environment: environments.Environment, request: Type[Request], argv: List[str], **defaults: Any
) -> List[str]:
    """The worker's command: the options after -- (``argv``), the session's ``defaults`` where they say nothing.

    Options the worker's parser refuses go to it as they are, after the defaults, for it to say what is wrong.
    """
    try:
        return environment.worker_command(request.from_argv(argv, **defaults))
    except RequestError:
        return environment.worker_command(request(**defaults), *argv)


@nox.session(python=False, default=False, tags=["all"])
@nox.parametrize(["torch", "variant"], _params())
def run(session: nox.Session, torch: str, variant: str) -> None:
    """Install a torch build (or reuse it) and run the cases in it; options after -- go to export-matrix run."""
    posargs = _without_report_words(list(session.posargs))
    out = _out_dir(posargs)
    environment = _environment(session, torch, variant, out)
    # What the session passes unless the options after -- say otherwise: programs kept for the load sessions.
    defaults: Dict[str, Any] = {"out": out, "variant": variant, "artifacts": str(Path(out) / ARTIFACTS)}
    try:  # the device the options after -- name, if any: CUDA is probed only where they name none
        named = RunRequest.from_argv(posargs, out=out, device=None).device
    except RequestError:
        named = None
    if named is None and environments.cuda_available(environment):
        defaults["device"] = "cuda"
    defaults["with_requirements"] = _with()  # the options' --with add to these
    selection = _named()
    if selection is not None and not _names_cases(posargs):
        defaults["select"] = SELECTION_CASES[selection]
    defaults.update(SELECTION_RUN.get(selection or "", {}))  # the options after -- win (--stages ...)
    try:
        request: Optional[RunRequest] = RunRequest.from_argv(posargs, **defaults)
    except RequestError:
        request = None
    plan = None if request is None else sets.plan(request, environment.spec.build.torch_version)
    if plan is None or not plan.sets:  # the worker reads the options itself, and says what is wrong
        command = _worker_command(environment, RunRequest, posargs, **defaults)
        _run_logged(session, command, environment.worker_env(), logs.log_path(Path(out), environment.spec.name))
        return
    # Cases that import more than torch run in an environment per dependency set (their PEP 723 block), and so do
    # the cells of a run whose stages run with packages of their own (--stages ...,onnx): never in the base one.
    for key, infos in plan.sets.items():
        spec = dataclasses.replace(environment.spec, dependency_set=key)
        if not key and not plan.packages:
            here: Optional[environments.Environment] = environment
        else:
            here = sets.prepare(spec, Path(out), infos, plan.modes, log=session.log, stages=plan.stages)
        if here is None:
            continue
        command = _worker_command(here, RunRequest, posargs, **defaults, dependency_set=key)
        _run_logged(session, command, here.worker_env(), logs.log_path(Path(out), spec.name))


def _names_cases(posargs: List[str]) -> bool:
    """Whether the options after -- choose cases themselves (then the quick selection's cases are not added)."""
    return any(word.split("=", 1)[0] in ("--select", "--tag", "--cases") for word in posargs)


@nox.session(python=False, default=False, tags=["all"])
@nox.parametrize(["torch", "variant"], _params())
def load(session: nox.Session, torch: str, variant: str) -> None:
    """Load every program the run sessions saved (on any release) into this torch build, and compare outputs."""
    posargs = _without_report_words(list(session.posargs))
    out = _out_dir(posargs)
    saved = Path(out) / ARTIFACTS
    if not saved.is_dir():
        session.skip("no saved programs in %s yet: run `nox -s run` first" % saved)
    environment = _environment(session, torch, variant, out)
    # One `nox -s run load -- ...` passes the rest (--mode, --tag, ...) to the run sessions only.
    given = load_words(posargs)
    try:  # the device the options after -- name, if any; else each device programs were saved on, where it is here
        named = LoadRequest.from_argv(given, artifacts=[str(saved)], out=out, device=None).device
    except RequestError:
        named = None
    cuda: Optional[bool] = None  # whether this build uses a GPU here: asked once, where a program was saved on one
    # Programs saved beside other packages (a case's PEP 723 block, --with) load where those are.
    for key, devices in _saved_sets(saved).items():
        spec = dataclasses.replace(environment.spec, dependency_set=key)
        here = environment
        if key:
            try:
                here = environments.prepare(spec, log=session.log)
            except environments.InstallError as error:
                session.log("%s: not loaded here, its packages cannot be installed: %s" % (spec.name, error))
                continue
        defaults: Dict[str, Any] = {"artifacts": [str(saved)], "out": out, "variant": variant, "dependency_set": key}
        defaults.update(SELECTION_LOAD.get(_named() or "", {}))  # the aoti selection compiles older programs here
        for device in [named] if named else devices:
            if named is None and device != "cpu":
                cuda = environments.cuda_available(environment) if cuda is None else cuda
                if not cuda:
                    session.log(
                        "%s: the programs saved on %s are not loaded here: no GPU it can use" % (spec.name, device)
                    )
                    continue
            command = _worker_command(here, LoadRequest, given, **defaults, device=device)
            log = "load_" + spec.name + ("" if device == "cpu" else "_" + device)
            _run_logged(session, command, here.worker_env(), logs.log_path(Path(out), log))


@nox.session(python=False, default=False)
def gpu(session: nox.Session) -> None:
    """On a GPU machine, offline: the case set with this interpreter's CUDA torch on the CPU, the CPU with the
    GPU hidden, and CUDA; prints whether the CPU runs agree and what differs on CUDA (records in gpu-check/)."""
    session.run("python", "-m", "matrix", "gpu-check", *session.posargs, external=True)


# No tags: `nox -t cpu` or `nox -t all` runs the run and load sessions of those builds, never this one.
@nox.session(python=False, default=False)
@nox.parametrize(["torch", "variant"], [nox.param(*param.args, id=param.id) for param in _params()])
def remove(session: nox.Session, torch: str, variant: str) -> None:
    """Remove this build's environments and what of uv's cache no remaining environment uses."""
    try:  # a channel's word removes every build of it installed here (each nightly's environment)
        removal.remove(releases.default_matrix().build(torch, variant), log=session.log)
    except removal.RemovalError as error:
        session.error(str(error))


def _saved_sets(saved: Path) -> Dict[str, List[str]]:
    """The dependency sets the programs under ``saved`` were saved with ("" for torch alone, always, first), each
    with the devices its programs were saved on (the CPU where there are none)."""
    from matrix.contract import layout

    found: Dict[str, Set[str]] = {"": set()}
    for artifact in layout.discover((str(saved),)):
        found.setdefault(artifact.dependency_set, set()).add(artifact.device)
    return {key: sorted(found[key]) or ["cpu"] for key in sorted(found)}


def _environment(session: nox.Session, torch: str, variant: str, out: str) -> environments.Environment:
    """The build's environment, installed or reused; a build that cannot be installed skips the session.

    A channel's word becomes the build its index offers now: the environment's spec says which.
    """
    build = releases.default_matrix().build(torch, variant)
    spec = environments.Spec(build, pythons.default_python(build.release))
    environment = env_errors.prepare_or_record(spec, Path(out), log=session.log)
    if environment is None:
        session.skip("torch %s could not be installed; the env-error record is in %s" % (build.torch_version, out))
    assert environment is not None  # session.skip raises
    return environment


def _run_logged(session: nox.Session, command: List[str], env: Dict[str, str], log: Path) -> None:
    """Run the worker with the runner's lines on the terminal and everything it prints in ``log``."""
    failed = True
    tee = logs.Tee(log, command)
    try:
        with tee:
            session.run(*command, env=env, external=True, stdout=tee.fd, stderr=subprocess.STDOUT)
        failed = False
    finally:
        other = tee.last_lines()
        if failed and other:
            session.warn("the worker's last other output:\n" + "\n".join(other))
        session.log("the worker's full output (torch's warnings and messages): %s" % log)


def _report(session: nox.Session, args: List[str], out: str) -> None:
    _install(session, ".")
    session.run("python", "-m", "matrix", "report", *args, "--out", out)
    session.log("the report is in %s" % os.path.join(out, "index.md"))


# The options of `export-matrix report`, and whether each takes a value: one `nox -s run load report -- ...`
# passes run's options (--select, --mode, ...) to the run and load sessions only.
REPORT_OPTIONS = {
    "--baseline": True, "--title": True, "--no-charts": False, "--case-root": True, "--out": True, "--fail-on": True,
    "--stages-from": True, "--csv": False,
}  # fmt: skip


def _report_words(posargs: List[str]) -> List[str]:
    """The words after -- that are the report's: its options and record folders, not another command's options."""
    kept: List[str] = []
    taking = skipping = False
    for word in posargs:
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            taking = REPORT_OPTIONS.get(option, False) and "=" not in word
            skipping = option not in REPORT_OPTIONS
            if not skipping:
                kept.append(word)
        elif taking:
            kept.append(word)
            taking = False
        elif not skipping:
            kept.append(word)
    return kept


@nox.session
def report(session: nox.Session) -> None:
    """Build the report from every record under results/ (or the folders after --) into reports/local/."""
    given = _report_words(list(session.posargs))
    folders = [word for at, word in enumerate(given) if not word.startswith("--") and not _takes_value(given, at)]
    args = given if folders else [RECORDS, *given]
    if not folders and not Path(RECORDS).is_dir():
        session.error("no records in %s/ yet: run `nox -s run` first" % RECORDS)
    out = LOCAL_REPORT
    if "--out" in args[:-1]:
        at = args.index("--out")
        out = args[at + 1]
        del args[at : at + 2]
    _report(session, args, out)


@nox.session(default=False)
def publish(session: nox.Session) -> None:
    """Rebuild the committed report, reports/latest/, from the record folders after --, compared with its previous
    publication in git history unless --baseline names another report."""
    if not session.posargs:
        session.error("name the record folders to publish: nox -s publish -- RECORD_DIR... [--baseline DIR]")
    if "--out" in session.posargs:
        session.error("publish always writes %s; use `nox -s report -- ... --out DIR` for others" % PUBLISHED_REPORT)
    args = list(session.posargs)
    if not any(word.split("=", 1)[0] == "--baseline" for word in args):
        args += _previous_publication(session, args)
    _report(session, args, PUBLISHED_REPORT)


@nox.session(default=False)
def site(session: nox.Session) -> None:
    """Build the HTML site of the committed report, reports/latest/site/ (git-ignored), from its own tables."""
    _install(session, ".")
    session.run("python", "-m", "matrix.report.published_site", PUBLISHED_REPORT)


def _previous_publication(session: nox.Session, args: List[str]) -> List[str]:
    """``--baseline DIR``: the previous publication of the published report, copied out of git history."""
    folders = [word for at, word in enumerate(args) if not word.startswith("--") and not _takes_value(args, at)]
    _install(session, ".")
    found = session.run(
        "python", "-m", "matrix.report.previous", PUBLISHED_REPORT, session.create_tmp(), *folders, silent=True
    )
    # The folder is the command's last line (nox gives its output and its warnings together).
    lines = [line.strip() for line in str(found or "").splitlines() if line.strip()]
    folder = lines[-1] if lines and os.path.isdir(lines[-1]) else ""
    if not folder:
        session.warn("no earlier publication of %s in git history: the report has no baseline" % PUBLISHED_REPORT)
        return []
    session.log("compared with the previous publication, %s" % os.path.basename(folder))
    return ["--baseline", folder]


def _without_report_words(posargs: List[str]) -> List[str]:
    """The words after -- without the report's own options (and their values): one `nox -s run load report --
    --fail-on regression` gives those to the report session alone."""
    kept: List[str] = []
    dropping = False
    for word in posargs:
        option = word.split("=", 1)[0]
        if word.startswith("--") and option in REPORT_OPTIONS and option != "--out":
            dropping = REPORT_OPTIONS[option] and "=" not in word
            continue
        if dropping:
            dropping = False
            continue
        kept.append(word)
    return kept


def _takes_value(words: List[str], at: int) -> bool:
    """Whether ``words[at]`` is the value of the report option before it."""
    return at > 0 and REPORT_OPTIONS.get(words[at - 1], False)


def _case_command(session: nox.Session, command: str, usage: str) -> None:
    """Run ``export-matrix COMMAND`` on the case file and options given after --, and EXPORT_MATRIX_WITH."""
    if not session.posargs:
        session.error("name a case file: " + usage)
    _install(session, ".")
    added = [word for requirement in _with() for word in ("--with", requirement)]
    session.run("export-matrix", command, *session.posargs, *added)


@nox.session(default=False)
def check(session: nox.Session) -> None:
    """Run one case file against chosen releases: nox -s check -- my_case.py --torch 2.3 2.5 2.8 [--variant cpu]."""
    _case_command(session, "check", "nox -s check -- path/to/case.py [--torch 2.3 2.5]")


@nox.session(default=False)
def bisect(session: nox.Session) -> None:
    """Find the first release where a case changes: nox -s bisect -- case.py --good 2.5.1 --bad 2.9.1."""
    _case_command(session, "bisect", "nox -s bisect -- case.py --good 2.5.1 --bad 2.9.1")


def _test_environment(session: nox.Session) -> None:
    # torch comes through pip's configuration (a local CPU wheel where one is configured),
    # else from PyPI; EXPORT_MATRIX_TEST_TORCH picks another requirement.
    # uv compiles the bytecode once at install, as pip does: where PYTHONDONTWRITEBYTECODE is set (CI runners and
    # container images often set it), Python never keeps what it compiles, and each of the hundreds of processes
    # the tests start would compile torch's modules again (`import torch, torch.export` 6.7 s instead of 2.7 s).
    compile_bytecode = [install.COMPILE_BYTECODE] if session.venv_backend == "uv" else []
    _install(session, *compile_bytecode, os.environ.get(TEST_TORCH_VARIABLE) or DEFAULT_TEST_TORCH, ".[test]")


@nox.session
def tests(session: nox.Session) -> None:
    """Run tests/unit and tests/integration on one torch (everything but the slow and the multi-release tests)."""
    _test_environment(session)
    session.run("pytest", "-n", "auto", "-m", "not releases and not slow", *session.posargs)


@nox.session(default=False)
def slow_tests(session: nox.Session) -> None:
    """Run the tests marked slow (minutes each: real compiles, nox and workflow runs); CI runs them after `tests`."""
    _test_environment(session)
    session.run("pytest", "-n", "auto", "-m", "slow and not releases", *session.posargs)


@nox.session(default=False)
def unit(session: nox.Session) -> None:
    """Run tests/unit (no process, no export), the loop to run after each change (about a minute)."""
    _test_environment(session)
    session.run("pytest", "-n", "auto", "tests/unit", *session.posargs)


@nox.session(default=False)
def release_tests(session: nox.Session) -> None:
    """Run the tests that install several torch releases (network and disk: minutes, gigabytes)."""
    _test_environment(session)
    session.run("pytest", "-m", "releases", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style, formatting and types (ruff, mypy)."""
    _install(session, ".[test]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
