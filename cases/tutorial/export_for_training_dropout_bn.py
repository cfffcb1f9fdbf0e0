"""A train-mode model with dropout and batch norm, the subject of `export_for_training` and the training IR.

Dropout draws random numbers, so only the export itself is compared.
"""

import torch

torch.manual_seed(0)


class TrainModeBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 6)
        self.bn = torch.nn.BatchNorm1d(6)
        self.drop = torch.nn.Dropout(0.3)

    def forward(self, x):
        return self.drop(torch.relu(self.bn(self.fc(x))))


model = TrainModeBlock().train()
example_args = (torch.randn(5, 6),)
tags = {"torch.training-ir", "python.random", "torch.mutation"}
requires = ["export_for_training"]
skip_check = "dropout in train mode draws random masks"
