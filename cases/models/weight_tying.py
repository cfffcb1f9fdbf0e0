"""An output projection that shares its weight with the input embedding (tied parameters)."""

import torch

torch.manual_seed(0)


class TiedLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(12, 6)
        self.out = torch.nn.Linear(6, 12, bias=False)
        self.out.weight = self.embed.weight

    def forward(self, ids):
        return self.out(torch.tanh(self.embed(ids)))


model = TiedLM()
example_args = (torch.tensor([[1, 5, 7], [0, 11, 3]]),)
tags = {"torch.model"}
