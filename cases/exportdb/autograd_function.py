"""A custom `torch.autograd.Function` is traced through its forward; its backward is not captured."""

import torch

torch.manual_seed(0)


class ScaledIdentity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.5

    @staticmethod
    def backward(ctx, grad):
        # Deliberately not the true gradient: export keeps only the forward computation.
        return grad * 3.0


class UsesAutogradFunction(torch.nn.Module):
    def forward(self, x):
        return ScaledIdentity.apply(x) + 1


model = UsesAutogradFunction()
example_args = (torch.randn(4, 3),)
expected = "supported"
