"""What a case needs besides torch: PEP 723 inline script metadata, read without running the case.

A case names the packages it imports the way uv and pipx read a script's needs::

    # /// script
    # dependencies = ["torchvision"]
    # requires-python = ">=3.10"
    # ///

The block is read from the source text (never by importing the case). Requirements added
to every case (``--with``) join a case's own into its *dependency set*; each set gets an
environment of its own beside a release's base environment, which holds torch alone.

Standard library only, Python 3.8 syntax: this runs inside every torch environment. Where
``tomllib`` is missing (Python < 3.11) a small reader takes the two keys this project uses,
``dependencies`` (a list of strings) and ``requires-python`` (a string), and skips tables.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

# PEP 723's block: an opening line, comment lines, a closing line.
_BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")
_OPENING = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)\s*$")
# A requirement's distribution name (PEP 508), and the form names are compared in (PEP 503).
_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_SEPARATORS = re.compile(r"[-_.]+")
# Where a dependency set's environment records what it added to the base environment.
MARKER = "export-matrix-env.json"


class MetadataError(Exception):
    """A malformed inline metadata block; the message names the file and line."""


def _line_of(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


def read_block(source: str, path: str) -> Optional[Dict[str, Any]]:
    """The ``script`` block's fields, None without one; MetadataError for a malformed block."""
    blocks = [m for m in _BLOCK.finditer(source) if m.group("type") == "script"]
    openings = [m for m in _OPENING.finditer(source) if m.group("type") == "script"]
    if len(openings) > 1:
        raise MetadataError("%s:%d: a second `# /// script` block" % (path, _line_of(source, openings[1].start())))
    if not blocks:
        if openings:
            raise MetadataError(
                "%s:%d: `# /// script` is never closed by a `# ///` line (every line between them starts with `#`)"
                % (path, _line_of(source, openings[0].start()))
            )
        return None
    block = blocks[0]
    line = _line_of(source, block.start())
    text = "".join(
        row[2:] if row.startswith("# ") else row[1:] for row in block.group("content").splitlines(keepends=True)
    )
    fields = _toml(text, path, line)
    return _validated(fields, path, line)


def _toml(text: str, path: str, line: int) -> Dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:
        return _small_toml(text, path, line)
    try:
        return dict(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise MetadataError("%s:%d: the `# /// script` block is not valid TOML: %s" % (path, line, exc))


def _small_toml(text: str, path: str, line: int) -> Dict[str, Any]:
    """Top-level ``key = value`` pairs whose values are strings or lists of strings; tables are skipped."""
    fields: Dict[str, Any] = {}
    pending: List[str] = []
    in_table = False
    for number, row in enumerate(text.splitlines(), line + 1):
        stripped = row.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if not pending and stripped.startswith("["):
            in_table = True  # [tool.x] tables are for other tools
            continue
        if in_table:
            continue
        pending.append(row)
        joined = "\n".join(pending)
        key, _, value = joined.partition("=")
        if not _:
            raise MetadataError("%s:%d: expected `key = value` in the `# /// script` block" % (path, number))
        if value.count("[") > value.count("]"):
            continue  # a list that goes on over the next lines
        pending = []
        try:
            fields[key.strip().strip('"')] = ast.literal_eval(_without_comments(value).strip())
        except (ValueError, SyntaxError):
            raise MetadataError("%s:%d: cannot read the value of `%s`" % (path, number, key.strip()))
    if pending:
        raise MetadataError("%s:%d: a list in the `# /// script` block is never closed" % (path, line))
    return fields


def _without_comments(value: str) -> str:
    kept = []
    for row in value.splitlines():
        quoted, cut = None, len(row)
        for index, char in enumerate(row):
            if quoted:
                quoted = None if char == quoted else quoted
            elif char in "\"'":
                quoted = char
            elif char == "#":
                cut = index
                break
        kept.append(row[:cut])
    return "\n".join(kept)


def _validated(fields: Dict[str, Any], path: str, line: int) -> Dict[str, Any]:
    dependencies = fields.get("dependencies", [])
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise MetadataError("%s:%d: `dependencies` must be a list of requirement strings" % (path, line))
    for requirement in dependencies:
        if name_of(requirement) is None:
            raise MetadataError('%s:%d: %r is not a requirement (e.g. "torchvision")' % (path, line, requirement))
    python = fields.get("requires-python")
    if python is not None and (not isinstance(python, str) or python_satisfies(python, (3, 0)) is None):
        raise MetadataError('%s:%d: `requires-python` must be a version specifier such as ">=3.10"' % (path, line))
    return {"dependencies": tuple(d.strip() for d in dependencies), "requires-python": python}


def name_of(requirement: str) -> Optional[str]:
    """A requirement's distribution name, normalized (``Pillow`` -> ``pillow``); None when it has none."""
    match = _NAME.match(requirement)
    if match is None:
        return None
    rest = requirement[match.end() :].strip()
    if rest and rest[0] not in "[<>=!~;@(":
        return None
    return _SEPARATORS.sub("-", match.group(1)).lower()


def canonical(requirement: str) -> str:
    """A requirement as it is compared and shown: its normalized name, then the rest without spaces."""
    name = name_of(requirement)
    match = _NAME.match(requirement)
    assert name is not None and match is not None, requirement
    rest = requirement[match.end() :]
    marker = ""
    if ";" in rest:
        rest, marker = rest.split(";", 1)
        marker = "; " + " ".join(marker.split())
    return name + "".join(rest.split()) + marker


def set_key(requirements: Iterable[str]) -> str:
    """The identity of a dependency set: its canonical requirements, sorted, joined by `` + ``; "" for none."""
    return " + ".join(sorted({canonical(r) for r in requirements}))


def key_requirements(key: str) -> Tuple[str, ...]:
    return tuple(key.split(" + ")) if key else ()


def set_suffix(key: str) -> str:
    """What a set adds to an environment's and a record file's name: ``_deps-`` and a short hash; "" for none."""
    import hashlib

    return "_deps-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8] if key else ""


# --- requires-python ---------------------------------------------------------------------------

_CLAUSE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)*)(\.\*)?\s*$")


def _version(text: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _padded(a: Tuple[int, ...], b: Tuple[int, ...]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    size = max(len(a), len(b))
    return a + (0,) * (size - len(a)), b + (0,) * (size - len(b))


def python_satisfies(specifier: str, version: Sequence[int]) -> Optional[bool]:
    """Whether a Python ``version`` meets ``specifier`` (">=3.10,<3.13"); None when it cannot be read."""
    have = tuple(version)
    for clause in specifier.split(","):
        match = _CLAUSE.match(clause)
        if match is None:
            return None
        op, wanted, wildcard = match.group(1), _version(match.group(2)), match.group(3)
        if wildcard:
            if op not in ("==", "!="):
                return None
            same = have[: len(wanted)] == wanted
            if same != (op == "=="):
                return False
            continue
        mine, theirs = _padded(have, wanted)
        if op == "~=":
            if len(wanted) < 2:
                return None
            ok = mine >= theirs and have[: len(wanted) - 1] == wanted[:-1]
        else:
            ok = {
                "==": mine == theirs, "===": mine == theirs, "!=": mine != theirs,
                "<=": mine <= theirs, ">=": mine >= theirs, "<": mine < theirs, ">": mine > theirs,
            }[op]  # fmt: skip
        if not ok:
            return False
    return True


def python_version() -> Tuple[int, int, int]:
    return tuple(sys.version_info[:3])  # type: ignore[return-value]


# --- in an environment ---------------------------------------------------------------------------


def installed(requirements: Iterable[str]) -> Dict[str, Optional[str]]:
    """Each requirement's distribution and its installed version here (None: not installed)."""
    from importlib import metadata

    found: Dict[str, Optional[str]] = {}
    for requirement in requirements:
        name = name_of(requirement)
        if name is None:
            continue
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def blamed(exc: BaseException, requirements: Iterable[str]) -> Optional[Tuple[str, str]]:
    """The declared distribution (name, version) whose own code raised ``exc``, if one did.

    A case whose library fails at import on this torch (``transformers`` asking for a newer
    torch) fails there, not in torch.export: the record says which library.
    """
    names = {name for name in (name_of(r) for r in requirements) if name}
    if not names:
        return None
    versions = installed(sorted(names))
    packages = _packages_of(names)
    tb = exc.__traceback__
    culprit = None
    while tb is not None:
        parts = re.split(r"[\\/]", tb.tb_frame.f_code.co_filename)
        if "site-packages" in parts or "dist-packages" in parts:
            where = parts.index("site-packages") if "site-packages" in parts else parts.index("dist-packages")
            top = parts[where + 1] if where + 1 < len(parts) else ""
            top = top[: -len(".py")] if top.endswith(".py") else top
            if top in packages:
                culprit = packages[top]  # the innermost frame of a declared library
        tb = tb.tb_next
    if culprit is None or versions.get(culprit) is None:
        return None
    return culprit, str(versions[culprit])


def _packages_of(names: Iterable[str]) -> Dict[str, str]:
    """Top-level import names of the given distributions: ``{"PIL": "pillow", "torchvision": "torchvision"}``."""
    from importlib import metadata

    tops: Dict[str, str] = {}
    for name in names:
        tops[name.replace("-", "_")] = name
        try:
            text = metadata.distribution(name).read_text("top_level.txt") or ""
        except metadata.PackageNotFoundError:
            continue
        for top in text.split():
            tops[top] = name
    return tops


def environment_fields(dependency_set: Optional[str]) -> Dict[str, Any]:
    """What an environment record says of the dependency set installed here, from the installer's marker."""
    import json
    import os

    added: Optional[Dict[str, str]] = None
    try:
        with open(os.path.join(sys.prefix, MARKER), encoding="utf-8") as f:
            marker = json.load(f)
        if isinstance(marker, dict) and isinstance(marker.get("added"), dict):
            added = {str(k): str(v) for k, v in marker["added"].items()}
    except (OSError, ValueError):
        pass
    return {"dependency_set": dependency_set, "added_packages": added}


def _modules(requirements: Iterable[str]) -> List[str]:
    names = sorted({name for name in (name_of(r) for r in requirements) if name})
    tops = _packages_of(names)
    installed_names = {name for name, version in installed(names).items() if version is not None}
    return sorted(top for top, name in tops.items() if name in installed_names and not top.startswith("_"))


def preimport(requirements: Iterable[str]) -> List[str]:
    """Import the requirements' top-level modules in this process, where a trial import in a child succeeds.

    Forked cells then start with the library imported (seconds each for transformers) and
    copy nothing back: the import is the same for every cell, as torch's is. A library whose
    import fails or crashes is left to each cell, which records what happens.
    """
    import importlib
    import os

    modules = _modules(requirements)
    if not modules or not hasattr(os, "fork"):
        return []
    pid = os.fork()
    if pid == 0:  # the trial: a crash here costs nothing
        code = 1
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            for name in modules:
                importlib.import_module(name)
            code = 0
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return []
    done = []
    for name in modules:
        try:
            importlib.import_module(name)
            done.append(name)
        except Exception:
            break
    return done
