"""The command line as a user meets it: the top-level help, a help text for every option, the guide's reference
(docs/guide.md, where the README's moved)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import inspect
import re
from pathlib import Path
from typing import Dict, List

import pytest

from matrix import cli
from matrix.contract.options import DEFAULT_TIMEOUT_S

from conftest import ROOT

GUIDE = ROOT / "docs" / "guide.md"


def parser_of(command: str) -> argparse.ArgumentParser:
    module_name, description = cli.COMMANDS[command]
    parser = argparse.ArgumentParser(prog="export-matrix " + command, description=description)
    importlib.import_module(module_name).configure(parser)
    return parser


def options_of(command: str) -> List[argparse.Action]:
    return [a for a in parser_of(command)._actions if not isinstance(a, argparse._HelpAction)]


def synopses() -> Dict[str, str]:
    """The guide's synopsis of each command: its `export-matrix COMMAND` line and the indented lines after it."""
    text = GUIDE.read_text()
    block = text.split("## Commands\n", 1)[1].split("```\n", 2)[1]
    found: Dict[str, str] = {}
    current = None
    for line in block.splitlines():
        match = re.match(r"export-matrix ([\w-]+) ", line)
        if match:
            current = match.group(1)
            found[current] = line
        elif current and line.startswith(" "):
            found[current] += " " + line.strip()
    return found


def test_the_top_level_help_describes_every_command(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    for command, (_, help_text) in cli.COMMANDS.items():
        assert "%s %s" % (command, help_text) in shown
    assert "nox -s run load report" in shown and "export-matrix COMMAND --help" in shown


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_option_has_a_help_text(command: str) -> None:
    missing = [a.option_strings or [a.dest] for a in options_of(command) if not (a.help or "").strip()]
    assert not missing, "export-matrix %s: options without help: %s" % (command, missing)


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_the_guide_synopsis_lists_exactly_the_options_of_each_command(command: str) -> None:
    synopsis = synopses().get(command)
    assert synopsis, "docs/guide.md's command reference has no line for export-matrix %s" % command
    tokens = [t.strip("[]()|") for t in synopsis.split()]
    actions = options_of(command)
    for action in actions:
        if not action.option_strings:
            continue
        name = max(action.option_strings, key=len)
        assert name in tokens, "docs/guide.md: export-matrix %s lacks %s" % (command, name)
        if action.choices:
            shown = tokens[tokens.index(name) + 1]
            assert shown == "|".join(action.choices), "docs/guide.md: export-matrix %s %s %s" % (command, name, shown)
    known = {s for a in actions for s in a.option_strings}
    stale = [t for t in tokens if t.startswith("--") and t not in known]
    assert not stale, "docs/guide.md: export-matrix %s has no options %s" % (command, stale)


def test_the_guide_table_of_run_options_is_its_help_word_for_word() -> None:
    parser = parser_of("run")
    formatter = parser._get_formatter()
    expected = [
        "| `%s` | %s |" % (formatter._format_action_invocation(a), a.help)
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction)
    ]
    text = GUIDE.read_text().split("## Commands\n", 1)[1]
    table = text.split("| option | meaning |\n| --- | --- |\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table == expected, "docs/guide.md's table of run options should read:\n" + "\n".join(expected)


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_takes_its_options_and_gives_a_cell_the_same_time(command: str) -> None:
    module = importlib.import_module(cli.COMMANDS[command][0])
    assert list(inspect.signature(module.main).parameters) == ["options"]
    timeouts = [a for a in options_of(command) if "--timeout" in a.option_strings]
    fields = {f.name: f.default for f in dataclasses.fields(module.OPTIONS)}
    assert bool(timeouts) == ("timeout" in fields)
    for action in timeouts:
        assert action.default == fields["timeout"] == DEFAULT_TIMEOUT_S
        assert "(default %g)" % DEFAULT_TIMEOUT_S in action.help


def test_one_table_lists_every_entry_point_and_the_worker_keeps_its_half() -> None:
    from matrix import commands
    from matrix.worker import commands as worker_commands

    # export-matrix's words: the worker's half, then the host's, and nothing else.
    assert cli.COMMANDS == {**worker_commands.COMMANDS, **commands.HOST}
    assert not set(worker_commands.COMMANDS) & set(commands.HOST)
    assert all(module.startswith("matrix.worker.") for module, _ in worker_commands.COMMANDS.values())
    # Every module that runs as `python -m` (a __main__ block or a package's __main__.py) is in the table, and
    # every module the table names is one.
    package = Path(cli.__file__).parent
    runnable = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__main__":
            runnable.add(".".join(parts[:-1]))
        elif 'if __name__ == "__main__":\n' in path.read_text(encoding="utf-8"):
            runnable.add(".".join(parts))
    assert runnable == set(commands.MODULES)
    assert all(importlib.util.find_spec(module) is not None for module, _ in cli.COMMANDS.values())
