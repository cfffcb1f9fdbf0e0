# /// script
# dependencies = ["transformers"]
# ///
"""CLIP from transformers (tiny config, random weights): texts and images to similarity logits.

Two towers; the number of texts, the text length and the number of images are independent dynamic dimensions.
"""

import torch
import transformers

torch.manual_seed(0)


class Similarity(torch.nn.Module):
    """Returns the image-text and text-image logits instead of a CLIPOutput."""

    def __init__(self):
        super().__init__()
        config = transformers.CLIPConfig(
            text_config=dict(
                vocab_size=100,
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                max_position_embeddings=32,
            ),
            vision_config=dict(
                image_size=32,
                patch_size=8,
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
            ),
            projection_dim=16,
        )
        self.clip = transformers.CLIPModel(config)

    def forward(self, input_ids, attention_mask, pixel_values):
        out = self.clip(input_ids=input_ids, attention_mask=attention_mask, pixel_values=pixel_values)
        return out.logits_per_image, out.logits_per_text


def dynamic_shapes():
    from torch.export import Dim

    texts, seq, images = Dim("texts", min=1, max=16), Dim("seq", min=2, max=32), Dim("images", min=1, max=16)
    return {
        "input_ids": {0: texts, 1: seq},
        "attention_mask": {0: texts, 1: seq},
        "pixel_values": {0: images},
    }


model = Similarity().eval()
example_args = (torch.randint(0, 100, (3, 7)), torch.ones(3, 7, dtype=torch.long), torch.randn(2, 3, 32, 32))
mask = torch.ones(4, 5, dtype=torch.long)
mask[1, 3:] = 0
extra_args = [(torch.randint(0, 100, (4, 5)), mask, torch.randn(5, 3, 32, 32))]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
