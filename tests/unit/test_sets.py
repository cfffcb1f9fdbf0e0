"""What a run selects, grouped by dependency set, read without running a case: the plan the sessions install by."""

from __future__ import annotations

import dataclasses

import pytest

from matrix.contract.case import CaseInfo
from matrix.contract.requests import RequestError, RunRequest
from matrix.envs import sets

from conftest import FIXTURES

CASES = str(FIXTURES / "dependencies")


def info(name: str, *needs: str) -> CaseInfo:
    return CaseInfo(name=name, path="cases/%s.py" % name, description="d", dependencies=needs)


def test_cases_that_name_the_same_packages_share_one_set_and_the_base_comes_first() -> None:
    grouped = sets.group([info("a", "Timm"), info("b"), info("c", "timm"), info("d", "timm", "torchvision")])
    assert list(grouped) == ["", "timm", "timm + torchvision"]
    assert [i.name for i in grouped["timm"]] == ["a", "c"]
    assert list(sets.group([info("a", "x")], added=["y==1"])) == ["x + y==1"]


def request(*argv: str) -> RunRequest:
    """The run request the sessions plan by, read from the options after --."""
    return RunRequest.from_argv(argv, out="-")


def names(plan: sets.Plan) -> dict:
    return {key: sorted(info.name for info in infos) for key, infos in plan.sets.items()}


def test_the_plan_groups_the_selected_cases_by_their_sets_the_base_first() -> None:
    plan = sets.plan(request("--cases", CASES, "--mode", "strict"), "2.13.0+cpu")
    assert plan is not None and plan.modes == ("strict",)
    assert list(plan.sets)[0] == ""
    assert names(plan)["packaging"] == ["installed", "library_fails"]
    assert names(plan)["a-package-nobody-installed>=1"] == ["absent"]


def test_with_joins_every_case_set_as_the_worker_counts_it() -> None:
    chosen = request("--cases", CASES, "--select", "installed", "torch_alone", "--with", "einops")
    plan = sets.plan(chosen, "2.13.0+cpu")
    assert plan is not None
    assert names(plan) == {"einops": ["torch_alone"], "einops + packaging": ["installed"]}


def test_globs_on_cell_ids_select_on_the_release_planned_for() -> None:
    here = sets.plan(request("--cases", CASES, "--select", "torch-2.13.0+cpu/strict/installed"), "2.13.0+cpu")
    assert here is not None and names(here) == {"packaging": ["installed"]}
    elsewhere = sets.plan(request("--cases", CASES, "--select", "torch-2.13.0+cpu/strict/installed"), "2.5.1")
    assert elsewhere is not None and elsewhere.sets == {}


def test_options_the_worker_refuses_leave_the_plan_to_it() -> None:
    with pytest.raises(RequestError, match="argument --mode: invalid choice: 'sideways'"):
        request("--cases", CASES, "--mode", "sideways")  # the session hands these words to the worker as they are
    assert sets.plan(request("--cases", CASES, "--timeout", "nan"), "2.13.0+cpu") is None
    assert sets.plan(request("--cases", CASES, "--tag", "no-such-tag"), "2.13.0+cpu") is None
    assert sets.plan(request("--source", "exportdb"), "2.13.0+cpu") is None


def test_a_set_the_resolver_refuses_records_which_part_of_it_came_from_with() -> None:
    from matrix.envs import environments, releases
    from matrix.envs.install import BuildUnavailable

    build = releases.default_matrix().resolve("2.9.1")
    spec = environments.Spec(build, "3.11", "timm + transformers==4.57.1")
    refused = BuildUnavailable("no solution: transformers==4.57.1 needs a newer torch")
    cells = sets.unresolvable_cells(spec, [info("own", "timm"), info("bare")], ["strict"], refused)
    assert [(c["case"], c["status"], c["with_set"]) for c in cells] == [
        ("own", "not-applicable", "transformers==4.57.1"),
        ("bare", "not-applicable", "timm + transformers==4.57.1"),
    ]
    assert sets.requested("timm + transformers==4.57.1", info("both", "Timm", "transformers==4.57.1")) == ""


def test_a_stage_with_packages_of_its_own_adds_them_to_every_set_environment_never_to_the_base() -> None:
    from matrix.envs import environments, releases

    matrix = releases.default_matrix()
    with_onnx = request("--cases", CASES, "--select", "installed", "torch_alone", "--stages", "check,onnx")
    plan = sets.plan(with_onnx, "2.13.0+cpu")
    assert plan is not None and plan.packages == ("onnx", "onnxscript", "onnxruntime")
    assert names(plan) == {"": ["torch_alone"], "packaging": ["installed"]}  # the cases' sets, as the records say
    for word in ("2.13.0+cpu", "2.5.1"):
        base = environments.Spec(matrix.resolve(word), "3.11")
        for key in plan.sets:
            spec = sets.with_stages(dataclasses.replace(base, dependency_set=key), plan.stages)
            assert spec.name != base.name and spec.base == base  # an environment of its own beside the release's
            assert {"onnx", "onnxscript", "onnxruntime"} <= set(spec.requirements)
            assert set(spec.dependencies) == {"onnx", "onnxscript", "onnxruntime", *([key] if key else [])}
        assert not {"onnx", "onnxscript", "onnxruntime"} & set(base.requirements)
    without = sets.plan(request("--cases", CASES, "--select", "installed", "torch_alone"), "2.13.0+cpu")
    assert without is not None and without.packages == () and without.sets.keys() == plan.sets.keys()
    alone = environments.Spec(matrix.resolve("2.13.0+cpu"), "3.11")
    assert sets.with_stages(alone, without.stages) is alone  # a run without the stage installs none of them
    assert sets.with_stages(alone, ("check", "aoti")) is alone  # nor one whose stages run with torch alone


def test_the_stage_packages_take_their_per_release_bounds_from_the_companions_table() -> None:
    from matrix.envs import companions, environments, releases

    table = {"onnxscript": companions.Companion("onnxscript", {"2.5": "<0.3"}), "onnx": companions.Companion("onnx")}
    build = releases.default_matrix().resolve("2.5.1")
    wider = sets.with_stages(environments.Spec(build, "3.11"), ("onnx",))
    assert companions.constraints(build, wider.dependencies, table) == ("onnxscript<0.3",)
    pinned = sets.with_stages(environments.Spec(build, "3.11", "onnxscript==0.2.6"), ("onnx",))
    assert companions.constraints(build, pinned.dependencies, table) == ()  # a case's own version wins
