# /// script
# dependencies = ["transformers"]
# ///
"""ViT image encoder from transformers (tiny config, random weights) on 32x32 images with a dynamic batch."""

import torch
import transformers

torch.manual_seed(0)


class ImageEncoder(torch.nn.Module):
    """Tensors in, tensors out: the hidden states and the pooled [CLS] vector instead of a ModelOutput."""

    def __init__(self):
        super().__init__()
        config = transformers.ViTConfig(
            image_size=32,
            patch_size=8,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
        )
        self.vit = transformers.ViTModel(config)

    def forward(self, pixel_values):
        out = self.vit(pixel_values=pixel_values)
        return out.last_hidden_state, out.pooler_output


def dynamic_shapes():
    from torch.export import Dim

    return {"pixel_values": {0: Dim("batch", min=1, max=32)}}


model = ImageEncoder().eval()
example_args = (torch.randn(2, 3, 32, 32),)
extra_args = [(torch.randn(3, 3, 32, 32),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
