"""A plain Python class registered as a pytree node (flatten/unflatten functions) used as an input."""

import inspect

import torch
import torch.utils._pytree as pytree

torch.manual_seed(0)


class Pair:
    def __init__(self, left, right):
        self.left = left
        self.right = right


def _flatten(p):
    return [p.left, p.right], None


def _unflatten(values, context):
    return Pair(values[0], values[1])


def _flatten_with_keys(p):
    return [(pytree.GetAttrKey("left"), p.left), (pytree.GetAttrKey("right"), p.right)], None


def register():
    # The public name arrived after 2.1; serialisation wants a stable type name and key paths
    # where the registry accepts them.
    register_node = getattr(pytree, "register_pytree_node", None) or pytree._register_pytree_node
    params = inspect.signature(register_node).parameters
    options = {}
    if "serialized_type_name" in params:
        options["serialized_type_name"] = "export_matrix_cases.Pair"
    if "flatten_with_keys_fn" in params:
        options["flatten_with_keys_fn"] = _flatten_with_keys
    register_node(Pair, _flatten, _unflatten, **options)


class PairDistance(torch.nn.Module):
    def forward(self, pair):
        return (pair.left - pair.right).pow(2).sum(-1)


def example_args():
    if Pair not in getattr(pytree, "SUPPORTED_NODES", {}):
        register()
    return (Pair(torch.randn(3, 4), torch.randn(3, 4)),)


model = PairDistance()
tags = {"torch.model", "torch.pytree"}
