"""Elementwise float16 arithmetic between casts to and from float32."""

import torch

torch.manual_seed(0)


class HalfRoundTrip(torch.nn.Module):
    def forward(self, x):
        h = x.to(torch.float16)
        h = torch.relu(h * 3 - 1) + h.abs()
        return h.to(torch.float32) / 2


model = HalfRoundTrip()
example_args = (torch.randn(4, 5),)
tags = {"torch.dtype"}
