"""Batch norm in train mode updates its running-mean/var buffers: buffer mutations in the exported program."""

import torch

torch.manual_seed(0)


class NormInTraining(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 6)
        self.bn = torch.nn.BatchNorm1d(6)

    def forward(self, x):
        return self.bn(self.fc(x))


model = NormInTraining().train()
example_args = (torch.randn(8, 4),)
tags = {"torch.model", "torch.mutation", "torch.training-ir"}
