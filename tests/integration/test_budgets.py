"""A stage's budget option is its declaration alone: a new stage with a budget gets its option, field and check."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

# A stage declared with a budget of its own, and nothing else: its option, its fields and its checks follow.
NEW_BUDGET = """
import dataclasses, json
from matrix.contract import stages
budget = stages.Budget("--warm-budget", 7.5, "seconds it may take (default %g)")
new = stages.Stage("warm", module="check_stage", budget=budget)
stages.DECLARED += (new,)
stages.BUDGETS += (new.budget,)
from matrix.commands import check
from matrix.contract.requests import RunRequest
from matrix.contract.errors import UserError
from matrix.worker import runner
run, checks = runner.configure, check.configure
import argparse
helps = {}
for name, configure in (("run", run), ("check", checks)):
    parser = argparse.ArgumentParser()
    configure(parser)
    (action,) = [a for a in parser._actions if "--warm-budget" in a.option_strings]
    helps[name] = [action.default, action.help]
given = RunRequest.from_argv(["--out", "o", "--warm-budget", "3"])
try:
    RunRequest(out="o", warm_budget=0).validate()
    refused = ""
except UserError as error:
    refused = str(error)
options = check.CheckOptions(cases=("c.py",), warm_budget=4)
print(json.dumps(dict(
    helps=helps, default=RunRequest(out="o").warm_budget, given=given.warm_budget, argv=given.argv(),
    refused=refused, runner=[f.name for f in dataclasses.fields(runner.RunOptions)][-1],
    check=options.warm_budget, passed=check.stages.budget_values(options)["warm_budget"],
)))
"""


def test_a_stage_declared_with_a_budget_gets_its_option_in_run_and_check_and_its_request_field() -> None:
    done = subprocess.run([sys.executable, "-c", NEW_BUDGET], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["helps"] == {"run": [7.5, "seconds it may take (default 7.5)"],
                              "check": [7.5, "seconds it may take (default 7.5)"]}  # fmt: skip
    assert found["default"] == 7.5 and found["given"] == 3.0 and found["argv"] == ["--warm-budget", "3.0", "--out", "o"]
    assert found["refused"] == "--warm-budget 0: give a finite number of seconds above 0"
    assert found["runner"] == "warm_budget"  # the worker's options hold it as the request does
    assert found["check"] == 4.0 and found["passed"] == 4.0  # check reads it and hands it on to run
