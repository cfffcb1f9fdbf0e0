"""Control-flow operators for the ExportDB cases, found wherever the installed torch keeps them.

ExportDB has used ``functorch.experimental.control_flow`` since torch 2.1, before
``torch.cond`` and ``torch._higher_order_ops.map`` became the documented spellings. The
operator is resolved once when a case imports this file (never inside ``forward``, where
strict export would have to trace the lookup), preferring the newer home so that the
cases keep importing after the experimental one goes away.
"""

import importlib


def _first(name, homes):
    for module_name in homes:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found = getattr(module, name, None)
        if found is not None:
            return found
    return _missing(name, homes)


def _missing(name, homes):
    def unavailable(*args, **kwargs):
        raise RuntimeError("this torch has no `%s` in any of %s" % (name, ", ".join(homes)))

    return unavailable


cond = _first("cond", ["torch", "functorch.experimental.control_flow"])
map = _first("map", ["torch._higher_order_ops.map", "functorch.experimental.control_flow"])
