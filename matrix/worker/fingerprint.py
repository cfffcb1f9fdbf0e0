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
- :func:`.canonical.canonicalize` (pure text) renames what torch generates by its role and
  position, keeping the FQNs the user wrote: the readable canonical text (recorded as
  ``graph_text``) and its hash.

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

from typing import Any, Dict, List, Tuple

from .canonical import DYNAMO_PREFIX, canonicalize

# Bump when the canonical text changes for the same program: hashes of different
# versions must never be compared as if alike.
FINGERPRINT_VERSION = 2


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
        found = flattened.get(DYNAMO_PREFIX.sub("", name), [])
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
