"""`F.one_hot` of an argmax with an explicit class count, turned back into a float mask."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class HardChoice(torch.nn.Module):
    def forward(self, logits):
        choice = F.one_hot(logits.argmax(-1), num_classes=5)
        return choice.to(logits.dtype) * logits


model = HardChoice()
example_args = (torch.randn(3, 5),)
tags = {"torch.operator"}
