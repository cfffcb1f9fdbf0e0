"""Class methods, called through the instance, the class and `type(self)`, are inlined."""

import torch

torch.manual_seed(0)


class ProjectThenShift(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(5, 3)

    @classmethod
    def shift(cls, t):
        return t - 0.5

    def forward(self, x):
        h = self.proj(x)
        return self.shift(h) + type(self).shift(h) * self.__class__.shift(h)


model = ProjectThenShift()
example_args = (torch.randn(2, 5),)
expected = "supported"
