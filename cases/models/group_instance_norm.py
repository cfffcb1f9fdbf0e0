"""Group norm and instance norm (with running stats, eval) over a small feature map."""

import torch

torch.manual_seed(0)


class Norms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = torch.nn.GroupNorm(2, 4)
        self.inorm = torch.nn.InstanceNorm2d(4, affine=True, track_running_stats=True)

    def forward(self, x):
        return self.inorm(self.gn(x))


model = Norms().eval()
example_args = (torch.randn(2, 4, 5, 5),)
tags = {"torch.model"}
