"""A module-level tensor read inside `forward`, captured as a constant of the program."""

import torch

torch.manual_seed(0)

WINDOW = torch.hann_window(6)


class Windowed(torch.nn.Module):
    def forward(self, x):
        window = WINDOW if WINDOW.device == x.device else WINDOW.to(x.device)  # decided while tracing
        return x * window


model = Windowed()
example_args = (torch.randn(2, 6),)
tags = {"python.closure"}
