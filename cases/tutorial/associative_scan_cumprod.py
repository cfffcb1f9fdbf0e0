"""`associative_scan` computing a cumulative product along a dimension with a generic combine function.

The generic combine mode is what lets the scan run on CPU; earlier releases generated
code for CUDA only, so there the case is not applicable.
"""

import torch

torch.manual_seed(0)


class CumulativeProduct(torch.nn.Module):
    def forward(self, x):
        from torch._higher_order_ops.associative_scan import associative_scan

        def combine(a, b):
            return a * b

        return associative_scan(combine, x, 1, combine_mode="generic")


model = CumulativeProduct()
example_args = (torch.rand(2, 5) + 0.5,)
tags = {"torch.higher-order-op"}
requires = ["associative_scan", "associative_scan.generic"]
expected = "supported"
