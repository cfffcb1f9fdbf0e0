"""An `if` on the rank of an input is decided at trace time and only the taken branch is kept."""

import torch

torch.manual_seed(0)


class RankBranch(torch.nn.Module):
    def forward(self, x):
        if x.dim() == 3:
            return x + torch.full((1, 1, 1), 0.5, device=x.device)
        return x


model = RankBranch()
example_args = (torch.randn(2, 3, 4),)
tags = {"python.control-flow"}
expected = "supported"
