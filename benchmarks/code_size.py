"""Size of the code, as the project measures it: code lines, not docstrings, comments or blank lines.

    python benchmarks/code_size.py [FOLDER ...] [--word WORD]

Per folder (default: each subpackage of matrix/): its Python files' code lines, counted with ``tokenize``
(a line counts where a token other than a comment or a line break sits on it) less the lines of docstrings
(found with ``ast``: the first statement of a module, class or function, where it is a string). ``--word``:
the files in which WORD is part of a code token (a name, or a string that is not a docstring), as a
concept's spread is measured (``--word aoti``).
"""

from __future__ import annotations

import argparse
import ast
import io
import tokenize
from pathlib import Path
from typing import Dict, List, Set

SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def docstring_lines(source: str) -> Set[int]:
    lines: Set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def code_lines(source: str) -> int:
    docs = docstring_lines(source)
    lines: Set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in SKIPPED:
            lines.update(line for line in range(token.start[0], token.end[0] + 1) if line not in docs)
    return len(lines)


def holds(source: str, word: str) -> bool:
    """Whether ``word`` is part of a code token of ``source``: a name, or a string that is not a docstring."""
    docs = docstring_lines(source)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME and word in token.string.lower():
            return True
        if token.type == tokenize.STRING and token.start[0] not in docs and word in token.string.lower():
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", metavar="FOLDER")
    parser.add_argument("--word", help="list the files with WORD in a code token")
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    folders = [Path(f) for f in args.folders] or sorted(p for p in (root / "matrix").iterdir() if p.is_dir())
    sizes: Dict[str, int] = {}
    spread: List[str] = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            sizes[str(folder)] = sizes.get(str(folder), 0) + code_lines(source)
            if args.word and holds(source, args.word.lower()):
                spread.append(str(path))
    for folder, lines in sizes.items():
        print("%-28s %6d code lines" % (folder, lines))
    print("%-28s %6d code lines" % ("total", sum(sizes.values())))
    if args.word:
        print("%r in a code token: %d files" % (args.word, len(spread)))
        for path in spread:
            print("  " + path)


if __name__ == "__main__":
    main()
