"""Plain Python attributes of the module (a string compared with an Enum value, an int) are specialised."""

from enum import Enum

import torch

torch.manual_seed(0)


class Mode(Enum):
    SCALE = "scale"
    SHIFT = "shift"


class AttributeDriven(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mode = "scale"
        self.amount = 3

    def forward(self, x):
        if self.mode == Mode.SCALE.value:
            return x * self.amount
        if self.mode == Mode.SHIFT.value:
            return x + self.amount
        raise ValueError("unknown mode %r" % self.mode)


model = AttributeDriven()
example_args = (torch.randn(3, 2),)
expected = "supported"
