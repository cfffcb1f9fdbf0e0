"""`EmbeddingBag` in mean mode with a flat index tensor and bag offsets."""

import torch

torch.manual_seed(0)


class Bags(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(30, 6, mode="mean")

    def forward(self, ids, offsets):
        return self.bag(ids, offsets)


model = Bags()
example_args = (torch.tensor([1, 4, 9, 2, 2, 27, 13]), torch.tensor([0, 3, 5]))
tags = {"torch.model"}
