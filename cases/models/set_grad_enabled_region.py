"""`torch.set_grad_enabled(False)` used as a context manager inside `forward`."""

import torch

torch.manual_seed(0)


class GradToggle(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)

    def forward(self, x):
        with torch.set_grad_enabled(False):
            stats = self.fc(x).mean(0)
        return self.fc(x) - stats


model = GradToggle()
example_args = (torch.randn(4, 3),)
tags = {"python.context-manager"}
