"""The README and docs/ as a reader follows them: a short README, links that resolve, and commands,
options and nox sessions that exist."""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from matrix import cli

from conftest import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS, ROOT / "reports" / "FINDINGS.md"]

# The helper modules the docs name, and the argv that prints each one's options.
HELPERS = {
    "matrix.commands.ci plan": ("matrix.commands.ci", ["plan", "--help"]),
    "matrix.commands.ci summary": ("matrix.commands.ci", ["summary", "--help"]),
    "matrix.envs.removal": ("matrix.envs.removal", ["--help"]),
    "matrix.commands.companion_probe probe": ("matrix.commands.companion_probe", ["probe", "--help"]),
}
# nox's own options, written before a session's `--`.
NOX_OPTIONS = {"--list", "--json", "--sessions", "--no-venv", "--noxfile", "--tags"}
# Options of other tools that the docs name in a code span of their own, with no command before them.
FOREIGN_OPTIONS = {"--index-strategy", "--compile-bytecode"}  # uv's (docs/guide.md, Environments and Channels)
# Commands whose options are their own: a line's options after one of these are not checked.
FOREIGN_COMMANDS = re.compile(r"(?:^|[\s;&|(])(gh|pip|uv|git|actionlint|shellcheck|pytest|benchmarks/\w+\.py)\b")
# nox sessions -> the export-matrix command their words after `--` go to (the test sessions' go to pytest).
SESSION_COMMANDS = {
    "run": "run", "load": "load", "report": "report", "publish": "report", "check": "check", "bisect": "bisect",
}  # fmt: skip


def tokens(path: Path) -> List[Token]:
    return MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))


def inline_text(token: Token) -> str:
    """A heading's text as GitHub reads it for its anchor: text and code, without the markup."""
    return "".join(child.content for child in token.children or [] if child.type in ("text", "code_inline"))


def anchors(path: Path) -> Set[str]:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens,
    a repeated one numbered."""
    found: Set[str] = set()
    seen: Dict[str, int] = {}
    parsed = tokens(path)
    for at, token in enumerate(parsed):
        if token.type != "heading_open":
            continue
        slug = re.sub(r"[^\w\- ]", "", inline_text(parsed[at + 1]).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else "%s-%d" % (slug, count))
    return found


def links(path: Path) -> Iterator[str]:
    for token in tokens(path):
        for child in token.children or []:
            if child.type == "link_open":
                yield str(child.attrs["href"])
            elif child.type == "image":
                yield str(child.attrs["src"])


def broken_links(path: Path) -> List[str]:
    broken = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        name, _, anchor = target.partition("#")
        linked = (path.parent / name).resolve() if name else path
        if not linked.exists():
            broken.append("%s (no such file)" % target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append("%s (no such heading)" % target)
    return broken


def code_lines(path: Path) -> Iterator[str]:
    """The commands a page writes: each code span, and each line of a shell or plain code block, with the
    indented lines after a line joined to it (a synopsis goes on over several lines)."""
    for token in tokens(path):
        if token.type in ("fence", "code_block"):
            if token.info.strip() in ("python", "yaml", "mermaid", "toml", "json"):
                continue
            joined: List[str] = []
            for line in token.content.splitlines():
                line = re.sub(r"^\$ ", "", line)
                if line.startswith((" ", "\t")) and joined:
                    joined[-1] += " " + line.strip()
                else:
                    joined.append(line)
            yield from (re.split(r"\s#\s", line, maxsplit=1)[0] for line in joined)
        for child in token.children or []:
            if child.type == "code_inline":
                yield child.content


def help_options(module: str, argv: List[str]) -> Set[str]:
    """The options a helper module's --help lists (its parser is built inside its main)."""
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
        importlib.import_module(module).main(argv)
    listing = [line.split("  ", 1)[0] if line.startswith("  -") else "" for line in shown.getvalue().splitlines()]
    usage = shown.getvalue().split("\n\n", 1)[0]
    return set(re.findall(r"(?<![\w-])--[a-z][\w-]*", usage + "\n" + "\n".join(listing)))


def command_options() -> Dict[str, Set[str]]:
    """Every command's options: export-matrix's commands from their parsers, the helper modules from their help."""
    found: Dict[str, Set[str]] = {}
    for command, (module_name, description) in cli.COMMANDS.items():
        parser = argparse.ArgumentParser(prog="export-matrix " + command, description=description)
        importlib.import_module(module_name).configure(parser)
        found[command] = {option for action in parser._actions for option in action.option_strings}
    for helper, (module, argv) in HELPERS.items():
        found[helper] = help_options(module, argv) | {"--help"}
    return found


def nox_sessions() -> Set[str]:
    """The sessions noxfile.py defines: each function decorated with nox.session, under its name."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(call, ast.Attribute) and call.attr == "session":
                named = [k.value for k in getattr(decorator, "keywords", []) if k.arg == "name"]
                found.add(str(named[0].value) if named and isinstance(named[0], ast.Constant) else node.name)
    return found


CONTEXT = re.compile(
    r"(?:export-matrix|python -m matrix)\s+(?P<command>[a-z][\w-]*)"
    r"|python -m matrix\.worker\s+(?P<worker>[a-z]+)"
    r"|python -m (?P<helper>matrix\.ci (?:plan|summary)|matrix\.envs\.removal|matrix\.envs\.companions probe)"
    r"|(?:^|[\s;&|(])nox(?P<nox>\s[^;&|]*)"
)


def sessions_named(nox_words: str) -> Tuple[List[str], str]:
    """The sessions of a nox command line (after `-s` or `--sessions`), and the words after its `--`."""
    before, _, after = nox_words.partition(" -- ")
    named: List[str] = []
    taking = False
    for word in before.split():
        if word in ("-s", "--sessions"):
            taking = True
        elif word.startswith("-"):
            taking = False
        elif taking:
            session = re.match(r"([a-z_]+)(?:\(|$)", word.strip("\"'"))
            if session:  # not the rest of a parametrized name: "run(torch='2.4.1', variant='pypi')"
                named.append(session.group(1))
    return named, after


def unknown_options(line: str, known: Dict[str, Set[str]], everything: Set[str]) -> List[str]:
    """The `--options` of one code line that the command they follow does not have."""
    wrong = []
    spans: List[Tuple[int, Optional[Set[str]]]] = [(0, everything | FOREIGN_OPTIONS)]
    for match in CONTEXT.finditer(line):
        if match.group("command"):
            command = match.group("command")
            if command not in cli.COMMANDS:
                wrong.append("export-matrix %s (no such command)" % command)
            spans.append((match.start(), known.get(command, set()) | {"--help"}))
        elif match.group("worker"):
            spans.append((match.start(), known.get(match.group("worker"), set()) | {"--help"}))
        elif match.group("helper"):
            spans.append((match.start(), known[match.group("helper").replace("python -m ", "")]))
        else:
            named, after = sessions_named(match.group("nox"))
            spans.append((match.start("nox"), NOX_OPTIONS))
            targets = [SESSION_COMMANDS[name] for name in named if name in SESSION_COMMANDS]
            posargs = set().union(*(known[command] for command in targets)) if targets else None
            if " -- " in match.group("nox"):
                spans.append((match.start("nox") + match.group("nox").index(" -- ") + 4, posargs))
    for match in FOREIGN_COMMANDS.finditer(line):
        spans.append((match.start(1), None))
    spans.sort(key=lambda span: span[0])
    for match in re.finditer(r"(?<![\w-])--[a-z][\w-]*", line):
        allowed = [options for start, options in spans if start <= match.start()][-1]
        if allowed is not None and match.group() not in allowed:
            wrong.append(match.group())
    return wrong


def test_the_readme_is_at_most_150_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_the_readme_links_each_docs_page() -> None:
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in links(README)}
    assert DOCS and set(DOCS) <= linked, set(DOCS) - linked


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves_to_a_file_and_heading(page: Path) -> None:
    assert not broken_links(page)


def test_a_link_to_a_missing_heading_is_broken(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A page\n\n## Two words: `code`\n\n## Two words: `code`\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text("[x](a.md#two-words-code) [y](a.md#two-words-code-1) [z](a.md#nowhere) [w](gone.md)\n")
    assert broken_links(page) == ["a.md#nowhere (no such heading)", "gone.md (no such file)"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_command_and_option_a_page_writes_exists(page: Path) -> None:
    known = command_options()
    everything = set().union(*known.values())
    wrong = {line: found for line in code_lines(page) for found in [unknown_options(line, known, everything)] if found}
    assert not wrong, "%s names what the command line lacks: %s" % (page.name, wrong)


def test_a_wrong_command_or_option_is_found() -> None:
    known = command_options()
    everything = set().union(*known.values())

    def wrong(line: str) -> List[str]:
        return unknown_options(line, known, everything)

    assert wrong("export-matrix run --out DIR --stages check") == []
    assert wrong("export-matrix run --trust") == ["--trust"]  # load's, not run's
    assert wrong("--no-such-option") == ["--no-such-option"]
    assert wrong("export-matrix frobnicate") == ["export-matrix frobnicate (no such command)"]
    assert wrong("nox -s check -- case.py --torch 2.3 --trust") == ["--trust"]
    assert wrong("nox -s load -- --trust") == []
    assert wrong("nox --no-venv -s report -- results --out x --stages check") == ["--stages"]
    assert wrong("python -m matrix.envs.removal --keep 2.6 --dry-run --out x") == ["--out"]
    assert wrong("gh run download 1 --pattern 'records-*' --dir shards") == []


def test_every_nox_session_the_pages_name_exists() -> None:
    sessions = nox_sessions()
    assert {"run", "load", "report", "publish", "tests", "unit", "lint"} <= sessions
    named = {
        (page.name, name)
        for page in PAGES
        for line in code_lines(page)
        for match in CONTEXT.finditer(line)
        if match.group("nox")
        for name in sessions_named(match.group("nox"))[0]
    }
    assert ("README.md", "tests") in named and ("README.md", "run") in named
    missing = {(page, name) for page, name in named if name not in sessions}
    assert not missing, missing
