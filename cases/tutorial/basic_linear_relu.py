"""The tutorial's first program: a linear layer on the sum of two inputs, then an in-place ReLU."""

import torch

torch.manual_seed(0)


class SumLinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, a, b):
        return torch.nn.functional.relu(self.fc(a + b), inplace=True)


model = SumLinearRelu()
example_args = (torch.randn(3, 16), torch.randn(3, 16))
expected = "supported"
