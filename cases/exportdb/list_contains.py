"""`in` and `not in` tests against lists of ints and strings, on shapes and constants, inside asserts."""

import torch

torch.manual_seed(0)


class MembershipAsserts(torch.nn.Module):
    def forward(self, x):
        assert x.size(1) in [4, 8, 16]
        assert x.size(0) not in [0, 1, 7]
        assert "rows" in ["rows", "cols"]
        return x * 3


model = MembershipAsserts()
example_args = (torch.randn(2, 4),)
tags = {"torch.dynamic-shape", "python.data-structure", "python.assert"}
expected = "supported"
