"""An optional input whose default is a tensor, left out of the call (ExportDB: not supported yet)."""

import torch

torch.manual_seed(0)

DEFAULT_OFFSET = torch.randn(2, 3)


class DefaultTensorArgument(torch.nn.Module):
    def forward(self, x, offset=DEFAULT_OFFSET):
        if offset is None:
            return x
        if offset.device != x.device:  # decided while tracing: the default lives on the CPU, x may not
            offset = offset.to(x.device)
        return x * offset


model = DefaultTensorArgument()
example_args = (torch.randn(2, 3),)
tags = {"python.object-model"}
expected = "not-supported-yet"
