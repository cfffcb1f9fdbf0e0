"""In-place ops through views of an intermediate tensor (a column, a transpose and a slice)."""

import torch

torch.manual_seed(0)


class ViewMutations(torch.nn.Module):
    def forward(self, x):
        h = x.clone()
        h[:, 0].mul_(2)
        h.t()[1].add_(1)
        h[1:].clamp_(min=-0.5)
        return h


model = ViewMutations()
example_args = (torch.randn(3, 4),)
tags = {"torch.mutation"}
