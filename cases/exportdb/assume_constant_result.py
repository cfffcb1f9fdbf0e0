"""A method marked with `assume_constant_result` runs once at trace time and its result is baked in.

The slice length comes from a tensor's value, which export cannot trace; the escape hatch
turns the value into a constant of the graph.
"""

import torch
import torch._dynamo

torch.manual_seed(0)


def constant_result(fn):
    # Looked up rather than imported so the module loads on releases without the marker;
    # `requires` makes those releases not-applicable.
    marker = getattr(torch._dynamo, "assume_constant_result", None)
    return marker(fn) if marker is not None else fn


class TruncateToLength(torch.nn.Module):
    @constant_result
    def length_of(self, n):
        return int(n.item())

    def forward(self, x, n):
        return x[: self.length_of(n)] * 2


model = TruncateToLength()
example_args = (torch.randn(5, 3), torch.tensor(2))
tags = {"torch.escape-hatch"}
requires = ["assume_constant_result"]
expected = "supported"
