"""A bilinear form and a batched outer product written with `torch.einsum`."""

import torch

torch.manual_seed(0)


class Bilinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 5))

    def forward(self, a, b):
        score = torch.einsum("bi,ij,bj->b", a, self.w, b)
        outer = torch.einsum("bi,bj->bij", a, b)
        return score, outer


model = Bilinear()
example_args = (torch.randn(3, 4), torch.randn(3, 5))
tags = {"torch.operator"}
