"""Values from `.item()` and `.tolist()` become unbacked symbols returned as Python ints."""

import torch

torch.manual_seed(0)


class ValuesAsInts(torch.nn.Module):
    def forward(self, x, y):
        first = x.item()
        rest = y.tolist()
        return rest + [first]


model = ValuesAsInts()
example_args = (torch.tensor(7), torch.tensor([3, 9, 4]))
extra_args = [(torch.tensor(-2), torch.tensor([0, 1, 5]))]
tags = {"torch.unbacked", "torch.dynamic-value"}
expected = "supported"
