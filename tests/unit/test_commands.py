"""The options of the worker's commands, declared once: another command takes run's as run declares them."""

from __future__ import annotations

import argparse

from matrix.contract import commands


def test_another_command_takes_runs_options_as_run_declares_them() -> None:
    parser = argparse.ArgumentParser()
    commands.add_run_options(parser, stages="the stages", timeout=None)
    assert [a.dest for a in parser._actions[1:]] == ["stages", "timeout"]  # in the order asked
    run = argparse.ArgumentParser()
    commands.add_run_arguments(run)
    declared = {a.dest: a for a in run._actions}
    for action in parser._actions[1:]:
        assert (action.type, action.default, action.choices) == (
            declared[action.dest].type, declared[action.dest].default, declared[action.dest].choices,
        )  # fmt: skip
    assert parser._actions[1].help == "the stages" and parser._actions[2].help == declared["timeout"].help
    assert parser.parse_args(["--timeout", "3"]).timeout == 3.0
