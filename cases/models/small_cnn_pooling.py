"""A tiny image classifier: strided conv, max pool, adaptive average pool, flatten and linear."""

import torch

torch.manual_seed(0)


class TinyClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 4, 3, stride=2, padding=1),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.AdaptiveAvgPool2d((2, 2)),
        )
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


model = TinyClassifier().eval()
example_args = (torch.randn(2, 1, 16, 16),)
tags = {"torch.model"}
