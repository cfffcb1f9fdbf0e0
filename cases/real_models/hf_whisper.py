# /// script
# dependencies = ["transformers"]
# ///
"""Whisper speech-to-text from transformers (tiny config, random weights): log-mel features, decoder tokens to logits.

Conv front end, encoder-decoder with cross-attention; batch and decoder length are dynamic. The
encoder insists on exactly 2 * max_source_positions feature frames, so the audio length is static.
"""

import torch
import transformers

torch.manual_seed(0)


class SpeechLogits(torch.nn.Module):
    """Returns the logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self):
        super().__init__()
        config = transformers.WhisperConfig(
            vocab_size=100,
            num_mel_bins=16,
            d_model=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            max_source_positions=16,
            max_target_positions=32,
            # The defaults name token ids of the 51865-word vocabulary.
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            decoder_start_token_id=1,
            begin_suppress_tokens=None,
        )
        self.whisper = transformers.WhisperForConditionalGeneration(config)

    def forward(self, input_features, decoder_input_ids):
        out = self.whisper(input_features=input_features, decoder_input_ids=decoder_input_ids, use_cache=False)
        return out.logits


def dynamic_shapes():
    from torch.export import Dim

    batch = Dim("batch", min=1, max=8)
    return {"input_features": {0: batch}, "decoder_input_ids": {0: batch, 1: Dim("tgt_len", min=2, max=32)}}


model = SpeechLogits().eval()
# (batch, mel bins, frames): 32 frames = 2 * max_source_positions (the second conv has stride 2).
example_args = (torch.randn(2, 16, 32), torch.randint(0, 100, (2, 4)))
extra_args = [(torch.randn(3, 16, 32), torch.randint(0, 100, (3, 6)))]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
