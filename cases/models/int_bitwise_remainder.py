"""Integer tensor arithmetic: remainder, bitwise and/xor/shift, and comparisons producing bool outputs."""

import torch

torch.manual_seed(0)


class IntegerOps(torch.nn.Module):
    def forward(self, a, b):
        r = torch.remainder(a, 7)
        bits = (a & b) ^ (a << 1)
        return r, bits, a > b, (a == b).any(), (r >= 0).all()


model = IntegerOps()
example_args = (torch.randint(0, 100, (6,)), torch.randint(0, 100, (6,)))
tags = {"torch.dtype"}
