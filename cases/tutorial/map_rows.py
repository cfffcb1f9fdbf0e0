"""`map` over the rows of a tensor with two scalar tensors passed to every call of the body."""

import torch

torch.manual_seed(0)


class MapWithScalars(torch.nn.Module):
    def forward(self, xs, a, b):
        from torch._higher_order_ops.map import map as map_rows

        def body(row, a, b):
            return row * a - b

        return map_rows(body, xs, a, b)


model = MapWithScalars()
example_args = (torch.randn(5, 3), torch.tensor(3.0), torch.tensor(2.0))
tags = {"torch.map", "torch.higher-order-op"}
requires = ["map"]
expected = "supported"
