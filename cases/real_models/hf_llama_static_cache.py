# /// script
# dependencies = ["transformers>=4.56"]  # TorchExportableModuleForDecoderOnlyLM takes batch_size= from 4.56
# ///
"""Llama (tiny config, random weights) decoding one token at a time against a static key/value cache.

The cache is wrapped the way transformers' ExecuTorch recipe does it
(TorchExportableModuleForDecoderOnlyLM): its tensors are buffers that each step updates in
place at cache_position. The three calls run in sequence, so the later steps read what the
earlier ones wrote.
"""

import torch
import transformers

torch.manual_seed(0)


class DecodeStep(torch.nn.Module):
    """Positional (input_ids, cache_position) -> logits, over transformers' static-cache wrapper."""

    def __init__(self):
        super().__init__()
        from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

        config = transformers.LlamaConfig(
            vocab_size=128,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
        )
        lm = transformers.LlamaForCausalLM(config).eval()
        # The wrapper asks for a static cache in the generation config.
        lm.generation_config.cache_implementation = "static"
        recipe = TorchExportableModuleForDecoderOnlyLM(lm, batch_size=1, max_cache_len=16)
        # The recipe's inner static-cache module is called directly: the outer forward of
        # transformers 5.x does not pass cache_position on, and the inner one needs it.
        self.step = recipe.model

    def forward(self, input_ids, cache_position):
        return self.step(input_ids=input_ids, cache_position=cache_position)


model = DecodeStep().eval()
example_args = (torch.tensor([[5]]), torch.tensor([0]))
extra_args = [(torch.tensor([[17]]), torch.tensor([1])), (torch.tensor([[42]]), torch.tensor([2]))]
tags = {"torch.model", "torch.mutation"}
