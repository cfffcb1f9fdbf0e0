"""Typed requests: a request becomes the worker's argv and back, and the worker's own parser reads it the same."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import pytest

from matrix.contract import requests
from matrix.contract.errors import UserError
from matrix.contract.options import from_namespace
from matrix.contract.requests import LoadRequest, RequestError, RunRequest
from matrix.worker import loader, runner

RUN = RunRequest(
    out="records",
    cases=("cases/a.py", "cases/more"),
    source="cases",
    select=("cond_*", "torch-2.5.1/strict/*"),
    tag=("torch.cond",),
    mode="strict",
    timeout=9.5,
    max_memory=0,
    device="cuda",
    variant="cpu",
    runs=2,
    force=True,
    isolation="spawn",
    stages=("check", "serialize"),
    hide_capability=("torch.cond",),
    progress="lines",
    warm_up="never",
    jobs=3,
    artifacts="records/artifacts",
    with_requirements=("einops", "transformers==4.57.1"),
    dependency_set="",
    diagnosis_budget=4.5,
)
LOAD = LoadRequest(
    artifacts=("saved", "more saved"),
    out="records",
    select=("cond_*",),
    timeout=3.0,
    max_memory=512,
    variant="pypi",
    force=True,
    isolation="inline",
    progress="none",
    jobs=2,
    trust=True,
    dependency_set="timm",
)


def worker_namespace(module: Any, argv: Any) -> argparse.Namespace:
    """What the worker's own parser (its module's ``configure``) reads from ``argv``."""
    parser = argparse.ArgumentParser()
    module.configure(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize("request_", [RUN, RunRequest(out="records"), LOAD, LoadRequest(("saved",), "records")])
def test_a_request_survives_its_argv(request_: Any) -> None:
    assert type(request_).from_argv(request_.argv()) == request_
    assert request_.command() == [request_.COMMAND, *request_.argv()]


def test_the_workers_parser_reads_a_run_request_into_the_same_options() -> None:
    for request in (RUN, RunRequest(out="records")):
        options = from_namespace(runner.RunOptions, worker_namespace(runner, request.argv()))
        fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(RunRequest)}
        assert fields == dataclasses.asdict(options)
        assert {f.name for f in dataclasses.fields(runner.RunOptions)} == set(fields)


def test_the_workers_parser_reads_a_load_request_into_the_same_options() -> None:
    for request in (LOAD, LoadRequest(("saved",), "records")):
        options = from_namespace(loader.LoadOptions, worker_namespace(loader, request.argv()))
        assert dataclasses.asdict(request) == dataclasses.asdict(options)


def test_a_bare_request_has_the_parsers_defaults() -> None:
    run = from_namespace(RunRequest, worker_namespace(runner, ["--out", "records"]))
    assert run == RunRequest(out="records") and RunRequest(out="records").argv() == ["--out", "records"]
    assert dataclasses.asdict(RunRequest(out="records")) == dataclasses.asdict(runner.RunOptions(out="records"))
    load = from_namespace(LoadRequest, worker_namespace(loader, ["saved", "--out", "records"]))
    assert load == LoadRequest(("saved",), "records")
    assert dataclasses.asdict(load) == dataclasses.asdict(loader.LoadOptions(("saved",), "records"))


def test_the_defaults_given_stand_where_argv_says_nothing() -> None:
    given = RunRequest.from_argv(["--with", "timm", "--no-artifacts"], out="o", artifacts="a", with_requirements=["x"])
    assert (given.out, given.artifacts, given.with_requirements) == ("o", None, ("x", "timm"))
    assert RunRequest.from_argv(["--out", "mine"], out="o").out == "mine"
    assert LoadRequest.from_argv([], artifacts=["saved"], out="o") == LoadRequest(("saved",), "o")
    with pytest.raises(TypeError, match="unknown fields"):
        RunRequest.from_argv([], out="o", nonsense=1)


def test_words_the_parser_refuses_raise_instead_of_exiting() -> None:
    with pytest.raises(RequestError, match="export-matrix run: error: argument --mode: invalid choice: 'sideways'"):
        RunRequest.from_argv(["--mode", "sideways"], out="o")
    with pytest.raises(RequestError, match="required: --out"):
        RunRequest.from_argv([])


@pytest.mark.parametrize(
    "argv",
    [
        ["--timeout", "nan"],
        ["--stages", "check,sideways"],
        ["--tag", "no-such-tag"],
        ["--runs", "0"],
        ["--jobs", "-1"],
        ["--variant", "../x"],
        ["--max-memory", "-5"],
        ["--with", "!!"],
    ],
)
def test_a_run_request_refuses_what_the_worker_refuses_with_its_message(argv: Any) -> None:
    request = RunRequest.from_argv(argv, out="o")
    with pytest.raises(UserError) as refused:
        request.validate()
    with pytest.raises(UserError) as worker:
        from_namespace(runner.RunOptions, worker_namespace(runner, request.argv()))
    assert str(refused.value) == str(worker.value)


def test_a_load_request_refuses_what_the_worker_refuses() -> None:
    request = LoadRequest.from_argv(["--timeout", "0"], artifacts=["saved"], out="o")
    with pytest.raises(UserError, match="--timeout 0.0"):
        request.validate()
    LOAD.validate()
    RUN.validate()


def test_load_takes_the_options_it_shares_with_run() -> None:
    given = ["--out", "o", "--mode", "strict", "--trust", "--tag", "torch.cond", "--progress", "none", "--jobs", "2"]
    assert requests.load_words(given) == ["--out", "o", "--trust", "--progress", "none"]


def test_no_budget_is_declared_by_hand_beside_the_stages() -> None:
    from matrix.commands import check
    from matrix.contract import stages

    own = {f.name for f in dataclasses.fields(RunRequest)} - {b.field for b in stages.BUDGETS}
    assert {b.field for b in stages.BUDGETS} == {"diagnosis_budget", "aoti_timeout"}
    assert not any(name.endswith(("_budget", "_timeout")) for name in own)
    assert {f.name for f in dataclasses.fields(check.CheckOptions)} >= {b.field for b in stages.BUDGETS}
