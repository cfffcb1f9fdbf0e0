"""`forward` parses a JSON string attribute for its settings: ordinary Python the strict tracer may not follow."""

import json

import torch

torch.manual_seed(0)


class ConfiguredScale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.config = json.dumps({"scale": 1.5, "shift": -0.5})

    def forward(self, x):
        settings = json.loads(self.config)
        return x * settings["scale"] + settings["shift"]


model = ConfiguredScale()
example_args = (torch.randn(2, 3),)
tags = {"python.builtin"}
