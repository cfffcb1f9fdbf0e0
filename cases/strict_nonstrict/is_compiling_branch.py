"""A branch on `torch.compiler.is_compiling()` that hides a data-dependent `if` from the compiler.

Strict export runs under the compiler and takes the `torch.where` path; whether non-strict
export counts as compiling decides if it meets the data-dependent `if` instead.
"""

import torch

torch.manual_seed(0)


class CompilerOnlyPath(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():
            return torch.where(x.sum() > 0, x * 2, -x)
        if x.sum() > 0:
            return x * 2
        return -x


model = CompilerOnlyPath()
example_args = (torch.ones(3),)
extra_args = [(-torch.ones(3),)]
tags = {"python.control-flow", "torch.dynamic-value"}
requires = ["compiler.is_compiling"]
