"""Sampling token ids from softmax probabilities with `torch.multinomial`."""

import torch

torch.manual_seed(0)


class Sampler(torch.nn.Module):
    def forward(self, logits):
        probs = torch.softmax(logits, dim=-1)
        return torch.multinomial(probs, 2, replacement=True)


model = Sampler()
example_args = (torch.randn(3, 10),)
tags = {"python.random"}
skip_check = "samples are random"
