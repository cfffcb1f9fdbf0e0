"""A program's outputs against a reference, input by input: what a cell's check and a load share.

Standard library and torch only, Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Sequence


class Mismatch(Exception):
    """The program ran, but what it gave differs from the reference; the message says where."""


def leaves(expected: Any, actual: Any) -> None:
    """Raise AssertionError naming the first leaf where ``actual`` differs from ``expected``.

    Both are flattened with torch's pytree; tensors are compared with torch's default
    tolerance for their dtype (NaN equal to NaN), other leaves with ``==``.
    """
    import torch
    from torch.utils import _pytree

    exp_leaves = _pytree.tree_flatten(expected)[0]
    act_leaves = _pytree.tree_flatten(actual)[0]
    if len(exp_leaves) != len(act_leaves):
        raise AssertionError("output has %d leaves, eager has %d" % (len(act_leaves), len(exp_leaves)))
    for index, (e, a) in enumerate(zip(exp_leaves, act_leaves)):
        if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            try:
                torch.testing.assert_close(a, e, equal_nan=True)
            except AssertionError as exc:
                raise AssertionError("output %d: %s" % (index, exc))
        elif e != a:
            raise AssertionError("output %d: %r != eager %r" % (index, a, e))


def call(program: Callable[..., Any], number: int, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """``program(*args, **kwargs)``; an exception it raises names the input it was given."""
    try:
        return program(*args, **kwargs)
    except Exception as exc:
        exc.args = ("input %d: %s" % (number, exc.args[0] if exc.args else ""),) + tuple(exc.args[1:])
        raise


def outputs(number: int, expected: Any, actual: Any) -> None:
    """Raise Mismatch when input ``number``'s outputs differ from the reference's."""
    try:
        leaves(expected, actual)
    except AssertionError as exc:
        raise Mismatch("input %d: %s" % (number, str(exc).strip()))
