"""A custom operator with a fake kernel, registered on first use.

Registration happens here, in a helper module that stays imported for the life of the
process, because ``torch.library`` drops an operator when the object that registered it
is garbage collected; a case module can be re-executed and would lose it.
"""

import torch

NAMESPACE = "export_matrix_tutorial"
_registered = {}


def shifted_relu():
    """Return ``torch.ops.export_matrix_tutorial.shifted_relu``, registering it the first time."""
    if "shifted_relu" not in _registered:

        @torch.library.custom_op(NAMESPACE + "::shifted_relu", mutates_args=())
        def _shifted_relu(x: torch.Tensor) -> torch.Tensor:
            return torch.relu(x - 0.25)

        @_shifted_relu.register_fake
        def _shifted_relu_fake(x):
            return torch.empty_like(x)

        _registered["shifted_relu"] = _shifted_relu
    return getattr(torch.ops, NAMESPACE).shifted_relu
