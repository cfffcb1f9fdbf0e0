"""An embedding with a padding index followed by a masked mean over the sequence."""

import torch

torch.manual_seed(0)


class MeanOfTokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(20, 8, padding_idx=0)

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-1).to(torch.float32)
        summed = (self.embed(ids) * mask).sum(1)
        return summed / mask.sum(1).clamp(min=1)


model = MeanOfTokens()
example_args = (torch.tensor([[3, 7, 0, 0], [1, 2, 19, 5]]),)
tags = {"torch.model"}
