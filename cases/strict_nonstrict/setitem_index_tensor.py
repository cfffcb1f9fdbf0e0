"""`x[..., index] = update` with an index tensor on a clone of the input, noted as failing under non-strict."""

import torch

torch.manual_seed(0)


class ScatterLastDim(torch.nn.Module):
    def forward(self, x, update, index):
        x = x.clone()
        x[..., index] = update
        return x


model = ScatterLastDim()
example_args = (
    torch.ones(2, 3, 8),
    torch.arange(2, dtype=torch.float32).reshape(1, 1, 2) + 10,
    torch.tensor([1, 5], dtype=torch.int32),
)
tags = {"torch.mutation"}
expected = "strict-only"
