"""The canonical text of a graph: torch's names replaced by roles and positions, so that it hashes alike.

Pure text, no torch: it reads what :func:`.fingerprint.raw_text` writes (the raw format is
described there) and renames everything torch generates by its role in the graph signature and
its position: ``param0``, ``buffer1``, ``const0``, ``input0``, ``obj0``, ``token0`` for inputs,
``v0``... for nodes, ``S0``/``U0`` for symbols. The FQNs of parameters and buffers, which the
user wrote, stay. A buffer's ``persistent`` flag is left out: it is state-dict bookkeeping, not
graph, and releases before 2.3 do not record it.
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Any, Dict, List, Optional, Tuple

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_HEX = re.compile(r"0x[0-9a-fA-F]{6,}")
_SYMBOL = re.compile(r"\b([su])(\d+)\b")
_ON_NODE = re.compile(r"on node '[^']*'")
_PATH = re.compile(r"(?<![\w.])(/[^\s:'\"]+)+\.py")
# A string literal (skipped, so that text inside it is never taken for a reference) or a reference.
_TOKEN = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|%([A-Za-z_]\w*)")
DYNAMO_PREFIX = re.compile(r"^L__s(?:elf)?___")


def normalize_text(text: str) -> str:
    """Strip object addresses and absolute file paths (kept: the file name) from free text."""
    text = _ADDRESS.sub("", text)
    text = _HEX.sub("0x?", text)
    return _PATH.sub(lambda m: m.group(0).rsplit("/", 1)[-1], text)


# Input kinds in the order their placeholders are listed, with the prefix of their names.
_INPUT_ROLES = (
    ("PARAMETER", "param"), ("BUFFER", "buffer"), ("CONSTANT_TENSOR", "const"), ("CUSTOM_OBJ", "obj"),
    ("TOKEN", "token"), ("USER_INPUT", "input"),
)  # fmt: skip
# Spec kinds whose target is an FQN the user wrote; every other target is torch's.
_USER_TARGETS = {"PARAMETER", "BUFFER", "BUFFER_MUTATION", "PARAMETER_MUTATION", "GRADIENT_TO_PARAMETER"}
# Output kinds that write the new value of a parameter or buffer.
_STATE_MUTATIONS = {"BUFFER_MUTATION", "PARAMETER_MUTATION"}
# Output kinds whose target names a user-input placeholder.
_INPUT_TARGETS = {"USER_INPUT_MUTATION", "GRADIENT_TO_USER_INPUT"}

_QUOTED = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_SPEC = re.compile(r"^(input|output) (\w+) (%\w+|" + _QUOTED + r"|\S+)(.*)$")
_SPEC_ATTR = re.compile(r" (\w+)=(" + _QUOTED + r"|\S+)")
_NODE = re.compile(r"^%(\w+) = (\w+)(?: (.*))?$")


class _Symbols:
    """Renames shape symbols by order of first appearance in the canonical text."""

    def __init__(self) -> None:
        self.names: Dict[str, str] = {}

    def __call__(self, text: str) -> str:
        def rename(match: re.Match[str]) -> str:
            key = match.group(0)
            if key not in self.names:
                kind = match.group(1).upper()
                count = sum(1 for v in self.names.values() if v.startswith(kind))
                self.names[key] = "%s%d" % (kind, count)
            return self.names[key]

        return _SYMBOL.sub(rename, text)


class _Spec:
    def __init__(self, direction: str, kind: str, arg: str, attrs: Dict[str, Any]) -> None:
        self.direction = direction
        self.kind = kind
        self.arg = arg
        self.target: Optional[str] = attrs.get("target")

    @property
    def ref(self) -> Optional[str]:
        return self.arg[1:] if self.arg.startswith("%") else None


class _Block:
    """One graph of the raw text: its node lines, subgraphs nested as blocks."""

    def __init__(self) -> None:
        self.items: List[Tuple[str, str, str, Optional[_Block]]] = []  # (name, op, rest, subgraph)
        self.result: Optional[str] = None


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _parse(raw: str) -> Tuple[List[_Spec], List[_Spec], _Block]:
    specs: List[_Spec] = []
    top = _Block()
    stack = [top]
    for number, line in enumerate(raw.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        spec = _SPEC.match(stripped)
        if spec and len(stack) == 1:
            attrs = {m.group(1): _literal(m.group(2)) for m in _SPEC_ATTR.finditer(spec.group(4))}
            specs.append(_Spec(spec.group(1), spec.group(2), spec.group(3), attrs))
            continue
        block = stack[-1]
        if stripped == "}":
            if len(stack) == 1:
                raise ValueError("line %d: unbalanced '}'" % number)
            stack.pop()
            continue
        if stripped.startswith("return "):
            block.result = stripped[len("return ") :]
            continue
        node = _NODE.match(stripped)
        if node is None:
            raise ValueError("line %d: not a raw graph line: %r" % (number, stripped[:80]))
        name, op, rest = node.group(1), node.group(2), node.group(3) or ""
        if op == "get_attr" and rest.endswith("{"):
            sub = _Block()
            block.items.append((name, op, rest[:-1].strip(), sub))
            stack.append(sub)
        else:
            block.items.append((name, op, rest, None))
    if len(stack) != 1:
        raise ValueError("unclosed subgraph")
    return (
        [s for s in specs if s.direction == "input"],
        [s for s in specs if s.direction == "output"],
        top,
    )


def _operands(text: str, names: Dict[str, str], symbols: _Symbols) -> str:
    """Operands with references renamed, strings cleaned and symbols renamed, in one pass."""
    out: List[str] = []
    last = 0
    for match in _TOKEN.finditer(text):
        out.append(symbols(normalize_text(text[last : match.start()])))
        ref = match.group(1)
        if ref is not None:
            out.append(names.get(ref, "?"))
        else:
            literal = _literal(match.group(0))
            if isinstance(literal, str):
                out.append(repr(symbols(_ON_NODE.sub("on node ?", normalize_text(literal)))))
            else:
                out.append(match.group(0))
        last = match.end()
    out.append(symbols(normalize_text(text[last:])))
    return "".join(out)


def _value(text: str, symbols: _Symbols) -> str:
    return symbols(normalize_text(text))


def _split_value(rest: str) -> Tuple[str, str]:
    """(what, value) of a node line's text after ``=``: the value follows the last ' : '."""
    head, sep, value = (" " + rest).rpartition(" : ")
    return (head.strip(), value) if sep else (rest, "-")


def _block_lines(
    block: _Block, names: Dict[str, str], symbols: _Symbols, indent: str, result: bool = True
) -> List[str]:
    """Canonical lines of the non-placeholder nodes and (with ``result``) the result of a graph."""
    counts: Dict[str, int] = {}

    def fresh(prefix: str) -> str:
        counts[prefix] = counts.get(prefix, 0) + 1
        return "%s%d" % (prefix, counts[prefix] - 1)

    lines: List[str] = []
    for name, op, rest, sub in block.items:
        if op == "placeholder":
            if name not in names:
                names[name] = fresh("in")
                lines.append("%s%s = input : %s" % (indent, names[name], _value(_split_value(rest)[1], symbols)))
            continue
        if sub is not None:
            names[name] = fresh("graph")
            lines.append("%s%s = subgraph {" % (indent, names[name]))
            lines.extend(_block_lines(sub, {}, symbols, indent + "  "))
            lines.append("%s}" % indent)
            continue
        what, value = _split_value(rest)
        if op == "get_attr":
            names[name] = fresh("attr")
            lines.append("%s%s = attr : %s" % (indent, names[name], _value(value, symbols)))
            continue
        target, paren, operands = what.partition("(")
        names[name] = fresh("v")
        call = target.strip() if op == "call_function" else "%s:%s" % (op, target.strip())
        text = _operands(paren + operands, names, symbols) if paren else ""
        lines.append("%s%s = %s%s : %s" % (indent, names[name], call, text, _value(value, symbols)))
    if result and block.result is not None:
        lines.append("%sreturn %s" % (indent, _operands(block.result, names, symbols)))
    return lines


def _state_target(target: Optional[str]) -> str:
    return " " + DYNAMO_PREFIX.sub("", target) if target else ""


def canonicalize(raw: str) -> Tuple[str, str]:
    """(hash, canonical text) of a raw text written by :func:`raw_text`. Pure: no torch needed."""
    inputs, outputs, top = _parse(raw)
    symbols = _Symbols()
    names: Dict[str, str] = {}
    values = {name: _split_value(rest)[1] for name, op, rest, _ in top.items if op == "placeholder"}

    prefixes = dict(_INPUT_ROLES)
    order = {kind: index for index, (kind, _) in enumerate(_INPUT_ROLES)}

    def rank(item: Tuple[int, _Spec]) -> Tuple[int, str, str, int]:
        # Parameters and buffers go by FQN: strict can list them in order of first use,
        # non-strict in order of registration. Other inputs keep their position.
        position, spec = item
        fqn = _state_target(spec.target) if spec.kind in ("PARAMETER", "BUFFER") else ""
        return order.get(spec.kind, len(order)), spec.kind, fqn, position

    lines: List[str] = []
    counts: Dict[str, int] = {}
    # Inputs are listed by role, so that where torch places a kind among the inputs cannot reach the hash.
    for _, spec in sorted(enumerate(inputs), key=rank):
        kind = spec.kind
        prefix = prefixes.get(kind, kind.lower())
        index = counts[prefix] = counts.get(prefix, -1) + 1
        name = "%s%d" % (prefix, index)
        target = _state_target(spec.target) if kind in _USER_TARGETS else ""
        if spec.ref is not None:
            names[spec.ref] = name
            value = _value(values.get(spec.ref, "-"), symbols)
            lines.append("%s = %s%s : %s" % (name, kind, target, value))
        else:
            lines.append("%s = %s%s = %s" % (name, kind, target, spec.arg))
    # With output specs, the outputs are listed by them instead of by the return line, in
    # an order torch cannot change: state mutations by FQN (they follow the order of the
    # state inputs), everything else by position.
    lines.extend(_block_lines(top, names, symbols, "", result=not outputs))

    def output_rank(item: Tuple[int, _Spec]) -> Tuple[int, str, int]:
        position, spec = item
        if spec.kind in _STATE_MUTATIONS:
            return 0, spec.kind + _state_target(spec.target), position
        return 1, "", position

    for index, (_, spec) in enumerate(sorted(enumerate(outputs), key=output_rank)):
        if spec.kind in _INPUT_TARGETS:
            target = " " + names.get(spec.target or "", "?")
        elif spec.kind in _USER_TARGETS:
            target = _state_target(spec.target)
        else:
            target = ""
        lines.append("out%d %s%s = %s" % (index, spec.kind, target, _operands(spec.arg, names, symbols)))
    text = "\n".join(lines) + "\n"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], text
