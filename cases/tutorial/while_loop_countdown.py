"""`while_loop` with a data-dependent trip count: halve a tensor until a counter runs out."""

import torch

torch.manual_seed(0)


class HalveUntilZero(torch.nn.Module):
    def forward(self, steps, x):
        from torch._higher_order_ops.while_loop import while_loop

        def keep_going(n, acc):
            return n > 0

        def body(n, acc):
            return n - 1, acc * 0.5 + 1

        _, out = while_loop(keep_going, body, (steps, x))
        return out


model = HalveUntilZero()
example_args = (torch.tensor(4), torch.randn(2, 3))
extra_args = [(torch.tensor(1), torch.randn(2, 3))]
tags = {"torch.higher-order-op", "torch.dynamic-value"}
requires = ["while_loop"]
expected = "supported"
