"""Exported without `dynamic_shapes`, the program is static: other input sizes are rejected at run time."""

import torch

torch.manual_seed(0)


class FourInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(5, 3)

    def forward(self, w, x, y, z):
        h = (x + y).flatten() + z
        return self.fc(w), h


model = FourInputs()
example_args = (torch.randn(6, 5), torch.randn(4), torch.randn(8, 4), torch.randn(32))
extra_args = [(torch.randn(6, 5), torch.randn(4), torch.randn(3, 4), torch.randn(12))]
tags = {"torch.dynamic-shape"}
expected = "fails"
