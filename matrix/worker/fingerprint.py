"""A normalized graph fingerprint: stable across processes, machines, releases and modes.

Torch spells the same program differently from release to release and between strict
and non-strict export: placeholders (``l_x_``, ``arg0_1``, ``x``, ``p_linear_weight``),
lifted constants (``_lifted_tensor_constant0``, ``lifted_tensor_0``, a closure cell's
``dict_type_L__self___..._closure___0_cell_contents``), node names, shape symbols
(``s0`` vs ``s77``), list-vs-tuple operands and assert messages that embed node names.

Fingerprinting takes two steps so that the second can be tested on text alone:

- :func:`raw_text` (needs torch) writes the program as it is, in torch's names: one line
  per graph-signature spec and per node (target, operands, shape/dtype), subgraphs
  indented in braces.
- :func:`canonicalize` (pure text) renames everything torch generates by its role in the
  graph signature and its position: ``param0``, ``buffer1``, ``const0``, ``input0``,
  ``obj0``, ``token0`` for inputs, ``v0``... for nodes, ``S0``/``U0`` for symbols. The
  FQNs of parameters and buffers, which the user wrote, stay. The result is the readable
  canonical text (recorded as ``graph_text``) and its hash. A buffer's ``persistent``
  flag is left out: it is state-dict bookkeeping, not graph, and releases before 2.3
  do not record it.

The raw format, one item per line::

    input <INPUT_KIND> <arg> [target=<repr>] [persistent=<repr>]
    output <OUTPUT_KIND> <arg> [target=<repr>]
    %<name> = placeholder : <value>
    %<name> = get_attr <repr target> : <value>
    %<name> = get_attr <repr target> {        (a subgraph, its lines indented by two)
    }
    %<name> = <op> <target>(<operands>) : <value>
    return <operands>

``<arg>`` is ``%name`` for a node or a literal; operands refer to nodes as ``%name``.
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Any, Dict, List, Optional, Tuple

# Bump when the canonical text changes for the same program: hashes of different
# versions must never be compared as if alike.
FINGERPRINT_VERSION = 2

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_HEX = re.compile(r"0x[0-9a-fA-F]{6,}")
_SYMBOL = re.compile(r"\b([su])(\d+)\b")
_ON_NODE = re.compile(r"on node '[^']*'")
_PATH = re.compile(r"(?<![\w.])(/[^\s:'\"]+)+\.py")
# A string literal (skipped, so that text inside it is never taken for a reference) or a reference.
_TOKEN = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|%([A-Za-z_]\w*)")
_DYNAMO_PREFIX = re.compile(r"^L__s(?:elf)?___")


def normalize_text(text: str) -> str:
    """Strip object addresses and absolute file paths (kept: the file name) from free text."""
    text = _ADDRESS.sub("", text)
    text = _HEX.sub("0x?", text)
    return _PATH.sub(lambda m: m.group(0).rsplit("/", 1)[-1], text)


# --------------------------------------------------------------------------- raw text


def raw_text(ep: Any) -> str:
    """The raw text of an ExportedProgram: its graph signature and graph in torch's own names."""
    lines = _raw_signature(ep)
    lines.extend(_raw_graph(ep.graph_module, ""))
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _raw_value(meta_val: Any) -> str:
    """Shape and dtype of a node's ``meta['val']``, symbols as torch names them."""
    import torch

    if isinstance(meta_val, torch.Tensor):
        dtype = str(meta_val.dtype).replace("torch.", "")
        return "%s[%s]" % (dtype, ",".join(str(d) for d in meta_val.shape))
    if isinstance(meta_val, (list, tuple)):
        return "(" + ",".join(_raw_value(v) for v in meta_val) + ")"
    if meta_val is None:
        return "-"
    return _one_line(type(meta_val).__name__ + ":" + str(meta_val))


def _raw_arg(arg: Any) -> str:
    import torch.fx

    if isinstance(arg, torch.fx.Node):
        return "%" + arg.name
    if isinstance(arg, (list, tuple)):
        return "[" + ", ".join(_raw_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        items = sorted(arg.items(), key=lambda kv: str(kv[0]))
        return "{" + ", ".join("%s: %s" % (k, _raw_arg(v)) for k, v in items) + "}"
    if isinstance(arg, (str, float)):
        return repr(arg)
    return _one_line(str(arg))


def _target(target: Any) -> str:
    if isinstance(target, str):
        return target
    name = getattr(target, "name", None)
    if callable(name):  # OpOverload / HigherOrderOperator expose name()
        try:
            text = str(name())
            if "::" in text:
                namespace, rest = text.split("::", 1)
                return "%s.%s" % (namespace, rest if "." in rest else rest + ".default")
            return "higher_order." + text
        except Exception:
            pass
    module = getattr(target, "__module__", None) or ""
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    module = {"_operator": "operator"}.get(module, module)
    return "%s.%s" % (module, qual) if module else str(qual)


def _raw_graph(graph_module: Any, indent: str) -> List[str]:
    import torch.fx

    lines: List[str] = []
    for node in graph_module.graph.nodes:
        val = _raw_value(node.meta.get("val")) if "val" in node.meta else "-"
        head = "%s%%%s = " % (indent, node.name)
        if node.op == "placeholder":
            lines.append("%splaceholder : %s" % (head, val))
        elif node.op == "get_attr":
            sub = getattr(graph_module, str(node.target), None)
            if isinstance(sub, torch.fx.GraphModule):
                lines.append("%sget_attr %r {" % (head, str(node.target)))
                lines.extend(_raw_graph(sub, indent + "  "))
                lines.append("%s}" % indent)
            else:
                lines.append("%sget_attr %r : %s" % (head, str(node.target), val))
        elif node.op == "output":
            lines.append("%sreturn %s" % (indent, _raw_arg(node.args[0])))
        else:
            operands = [_raw_arg(a) for a in node.args]
            operands += ["%s=%s" % (k, _raw_arg(v)) for k, v in sorted(node.kwargs.items())]
            lines.append("%s%s %s(%s) : %s" % (head, node.op, _target(node.target), ", ".join(operands), val))
    return lines


def _kind(spec: Any) -> str:
    kind = getattr(spec, "kind", None)
    return str(getattr(kind, "name", kind))


def _spec_arg(spec: Any) -> str:
    arg = getattr(spec, "arg", None)
    name = getattr(arg, "name", None)
    if name is not None and not hasattr(arg, "value"):
        return "%" + str(name)
    return repr(getattr(arg, "value", None))


def _spec_line(direction: str, kind: str, arg: str, target: Any = None, persistent: Any = None) -> str:
    line = "%s %s %s" % (direction, kind, arg)
    if target is not None:
        line += " target=%r" % str(target)
    if persistent is not None:
        line += " persistent=%r" % bool(persistent)
    return line


def _raw_signature(ep: Any) -> List[str]:
    sig = getattr(ep, "graph_signature", None)
    if sig is None:
        return []
    if getattr(sig, "input_specs", None) is None:
        return _raw_legacy_signature(ep, sig)
    lines = []
    for spec in sig.input_specs:
        target = getattr(spec, "target", None)
        lines.append(_spec_line("input", _kind(spec), _spec_arg(spec), target, getattr(spec, "persistent", None)))
    for spec in getattr(sig, "output_specs", None) or []:
        lines.append(_spec_line("output", _kind(spec), _spec_arg(spec), getattr(spec, "target", None)))
    return lines


def _raw_legacy_signature(ep: Any, sig: Any) -> List[str]:
    """The same lines from the signature of releases before input/output specs (2.1).

    Their state names are dynamo's (``L__self___linear_weight``); where one state_dict
    key flattens to such a name, that key (the user's FQN) is written instead.
    """
    params = getattr(sig, "inputs_to_parameters", {}) or {}
    buffers = getattr(sig, "inputs_to_buffers", {}) or {}
    mutated = getattr(sig, "buffers_to_mutate", {}) or {}
    try:
        keys = list(getattr(ep, "state_dict", {}) or {})
    except Exception:
        keys = []
    flattened: Dict[str, List[str]] = {}
    for key in keys:
        flattened.setdefault(key.replace(".", "_"), []).append(key)

    def fqn(name: str) -> str:
        if name in keys:
            return name
        found = flattened.get(_DYNAMO_PREFIX.sub("", name), [])
        return found[0] if len(found) == 1 else name

    lines = []
    for node in ep.graph_module.graph.nodes:
        if node.op != "placeholder":
            continue
        if node.name in params:
            lines.append(_spec_line("input", "PARAMETER", "%" + node.name, fqn(params[node.name])))
        elif node.name in buffers:
            lines.append(_spec_line("input", "BUFFER", "%" + node.name, fqn(buffers[node.name])))
        else:
            lines.append(_spec_line("input", "USER_INPUT", "%" + node.name))
    outputs = [n for n in ep.graph_module.graph.nodes if n.op == "output"]
    for arg in (outputs[0].args[0] if outputs else ()) or ():
        name = getattr(arg, "name", None)
        ref = "%" + name if name is not None else repr(arg)
        if name in mutated:
            lines.append(_spec_line("output", "BUFFER_MUTATION", ref, fqn(mutated[name])))
        else:
            lines.append(_spec_line("output", "USER_OUTPUT", ref))
    return lines


# --------------------------------------------------------------------------- canonical text

# Input kinds in the order their placeholders are listed, with the prefix of their names.
_INPUT_ROLES = (
    ("PARAMETER", "param"),
    ("BUFFER", "buffer"),
    ("CONSTANT_TENSOR", "const"),
    ("CUSTOM_OBJ", "obj"),
    ("TOKEN", "token"),
    ("USER_INPUT", "input"),
)
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
    return " " + _DYNAMO_PREFIX.sub("", target) if target else ""


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


def fingerprint(ep: Any) -> Tuple[str, List[str], int, str]:
    """(hash, sorted op set, node count, canonical text) of an ExportedProgram."""
    digest, text = canonicalize(raw_text(ep))
    ops = sorted(set(_ops(ep.graph_module)))
    nodes = sum(1 for _ in ep.graph_module.graph.nodes)
    return digest, ops, nodes, text


def _ops(graph_module: Any) -> List[str]:
    import torch.fx

    found = []
    for node in graph_module.graph.nodes:
        if node.op == "call_function":
            found.append(_target(node.target))
        elif node.op == "get_attr":
            sub = getattr(graph_module, str(node.target), None)
            if isinstance(sub, torch.fx.GraphModule):
                found.extend(_ops(sub))
    return found
