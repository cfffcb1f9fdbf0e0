"""A normalized graph fingerprint: stable across processes, machines and naming changes.

Raw ``graph_module.code`` is stable within a release but not across releases: node and
placeholder names, list-vs-tuple operands, symbol names (``s0`` vs ``s77``) and assert
messages that embed node names change. The canonical text keeps what matters — op
targets, edges, shapes/dtypes and the graph signature — and renames everything else by
position.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Dict, List, Tuple

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_HEX = re.compile(r"0x[0-9a-fA-F]{6,}")
_SYMBOL = re.compile(r"\b([su])(\d+)\b")
_ON_NODE = re.compile(r"on node '[^']*'")
_PATH = re.compile(r"(?<![\w.])(/[^\s:'\"]+)+\.py")


def normalize_text(text: str) -> str:
    """Strip object addresses and absolute file paths (kept: the file name) from free text."""
    text = _ADDRESS.sub("", text)
    text = _HEX.sub("0x?", text)
    return _PATH.sub(lambda m: m.group(0).rsplit("/", 1)[-1], text)


class _Namer:
    """Renames nodes and shape symbols by order of first appearance."""

    def __init__(self) -> None:
        self.nodes: Dict[str, str] = {}
        self.symbols: Dict[str, str] = {}

    def node(self, name: str, op: str) -> str:
        if name not in self.nodes:
            prefix = {"placeholder": "in", "get_attr": "attr", "output": "out"}.get(op, "v")
            count = sum(1 for v in self.nodes.values() if v.startswith(prefix))
            self.nodes[name] = "%s%d" % (prefix, count)
        return self.nodes[name]

    def symbolic(self, text: str) -> str:
        def rename(match: re.Match[str]) -> str:
            key = match.group(0)
            if key not in self.symbols:
                kind = match.group(1).upper()
                count = sum(1 for v in self.symbols.values() if v.startswith(kind))
                self.symbols[key] = "%s%d" % (kind, count)
            return self.symbols[key]

        return _SYMBOL.sub(rename, text)


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


def _value(meta_val: Any, namer: _Namer) -> str:
    """Shape and dtype of a node's ``meta['val']``."""
    import torch

    if isinstance(meta_val, torch.Tensor):
        dtype = str(meta_val.dtype).replace("torch.", "")
        shape = ",".join(namer.symbolic(str(d)) for d in meta_val.shape)
        return "%s[%s]" % (dtype, shape)
    if isinstance(meta_val, (list, tuple)):
        return "(" + ",".join(_value(v, namer) for v in meta_val) + ")"
    if meta_val is None:
        return "-"
    return namer.symbolic(type(meta_val).__name__ + ":" + str(meta_val))


def _arg(arg: Any, namer: _Namer) -> str:
    import torch.fx

    if isinstance(arg, torch.fx.Node):
        return namer.nodes.get(arg.name, "?" + arg.name)
    if isinstance(arg, (list, tuple)):
        return "[" + ", ".join(_arg(a, namer) for a in arg) + "]"
    if isinstance(arg, dict):
        return (
            "{"
            + ", ".join("%s: %s" % (k, _arg(v, namer)) for k, v in sorted(arg.items(), key=lambda kv: str(kv[0])))
            + "}"
        )
    if isinstance(arg, str):
        return repr(namer.symbolic(_ON_NODE.sub("on node ?", arg)))
    if isinstance(arg, float):
        return repr(arg)
    text = normalize_text(str(arg))
    return namer.symbolic(text)


def graph_lines(graph_module: Any, namer: _Namer, indent: str = "") -> List[str]:
    """Canonical lines for a graph and, inline, the subgraphs it reaches through get_attr."""
    import torch.fx

    lines: List[str] = []
    for node in graph_module.graph.nodes:
        name = namer.node(node.name, node.op)
        val = _value(node.meta.get("val"), namer) if "val" in node.meta else "-"
        if node.op == "placeholder":
            lines.append("%s%s = input : %s" % (indent, name, val))
        elif node.op == "get_attr":
            sub = getattr(graph_module, str(node.target), None)
            if isinstance(sub, torch.fx.GraphModule):
                lines.append("%s%s = subgraph {" % (indent, name))
                lines.extend(graph_lines(sub, _Namer_from(namer), indent + "  "))
                lines.append("%s}" % indent)
            else:
                lines.append("%s%s = attr : %s" % (indent, name, val))
        elif node.op == "output":
            lines.append("%sreturn %s" % (indent, _arg(node.args[0], namer)))
        else:
            args = ", ".join(
                [_arg(a, namer) for a in node.args]
                + ["%s=%s" % (k, _arg(v, namer)) for k, v in sorted(node.kwargs.items())]
            )
            lines.append("%s%s = %s(%s) : %s" % (indent, name, _target(node.target), args, val))
    return lines


def _Namer_from(parent: _Namer) -> _Namer:
    # Subgraphs get their own node names but share the shape symbols of the parent.
    child = _Namer()
    child.symbols = parent.symbols
    return child


_DYNAMO_PREFIX = re.compile(r"^L__s(?:elf)?___")


def _signature_lines(ep: Any) -> List[str]:
    sig = getattr(ep, "graph_signature", None)
    if sig is None:
        return []
    if getattr(sig, "input_specs", None) is None:
        return _legacy_signature_lines(ep, sig)
    lines = []
    for spec in getattr(sig, "input_specs", []) or []:
        kind = getattr(getattr(spec, "kind", None), "name", str(getattr(spec, "kind", "")))
        lines.append("in %s %s" % (kind, getattr(spec, "target", None) or ""))
    for spec in getattr(sig, "output_specs", []) or []:
        kind = getattr(getattr(spec, "kind", None), "name", str(getattr(spec, "kind", "")))
        lines.append("out %s %s" % (kind, getattr(spec, "target", None) or ""))
    return [line.rstrip() for line in lines]


def _legacy_signature_lines(ep: Any, sig: Any) -> List[str]:
    """The same lines from the signature of releases before input/output specs (2.1).

    Their state names carry dynamo's ``L__self___`` prefix, which is dropped; a nested
    module's dots were also flattened to underscores there, which cannot be undone.
    """
    params = getattr(sig, "inputs_to_parameters", {}) or {}
    buffers = getattr(sig, "inputs_to_buffers", {}) or {}
    mutated = getattr(sig, "buffers_to_mutate", {}) or {}
    lines = []
    for node in ep.graph_module.graph.nodes:
        if node.op != "placeholder":
            continue
        if node.name in params:
            lines.append("in PARAMETER " + _DYNAMO_PREFIX.sub("", params[node.name]))
        elif node.name in buffers:
            lines.append("in BUFFER " + _DYNAMO_PREFIX.sub("", buffers[node.name]))
        else:
            lines.append("in USER_INPUT")
    outputs = [n for n in ep.graph_module.graph.nodes if n.op == "output"]
    for arg in (outputs[0].args[0] if outputs else ()) or ():
        name = getattr(arg, "name", None)
        if name in mutated:
            lines.append("out BUFFER_MUTATION " + _DYNAMO_PREFIX.sub("", mutated[name]))
        else:
            lines.append("out USER_OUTPUT")
    return lines


def fingerprint(ep: Any) -> Tuple[str, List[str], int, str]:
    """(hash, sorted op set, node count, canonical text) of an ExportedProgram."""
    namer = _Namer()
    body = graph_lines(ep.graph_module, namer)
    text = "\n".join(_signature_lines(ep) + ["---"] + body) + "\n"
    ops = sorted(set(_ops(ep.graph_module)))
    nodes = sum(1 for _ in ep.graph_module.graph.nodes)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
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
