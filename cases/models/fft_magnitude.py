"""A real FFT with complex intermediates, reduced to magnitudes and phases before returning."""

import torch

torch.manual_seed(0)


class Spectrum(torch.nn.Module):
    def forward(self, signal):
        spec = torch.fft.rfft(signal, dim=-1)
        return spec.abs(), torch.angle(spec)


model = Spectrum()
example_args = (torch.randn(2, 16),)
tags = {"torch.operator", "torch.dtype"}
