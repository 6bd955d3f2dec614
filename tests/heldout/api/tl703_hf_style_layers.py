"""TL703 probe: an HF-style decoder that checkpoints through `torch.utils.checkpoint.checkpoint`
with a `create_custom_forward` closure and through a module alias, against a call with
`use_reentrant` from the config and a local `checkpoint` function that saves the model."""
import torch
import torch.nn as nn
import torch.utils.checkpoint
import torch.utils.checkpoint as cp


def save_checkpoint(model, path):
    torch.save({"model": model.state_dict()}, path)


class Decoder(nn.Module):
    def __init__(self, layers, gradient_checkpointing=False, use_reentrant=None):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.gradient_checkpointing = gradient_checkpointing
        self.use_reentrant = use_reentrant

    def forward(self, hidden_states, attention_mask=None):
        for i, layer in enumerate(self.layers):
            if self.gradient_checkpointing and self.training:
                def create_custom_forward(module):
                    def custom_forward(*inputs):
                        return module(*inputs)
                    return custom_forward

                if self.use_reentrant is None:
                    hidden_states = torch.utils.checkpoint.checkpoint(  # expect: TL703
                        create_custom_forward(layer), hidden_states, attention_mask)
                elif i % 2:
                    hidden_states = cp.checkpoint(layer, hidden_states, attention_mask)  # expect: TL703
                else:
                    hidden_states = cp.checkpoint(layer, hidden_states, attention_mask,  # clean
                                                  use_reentrant=self.use_reentrant)
            else:
                hidden_states = layer(hidden_states, attention_mask)
        return hidden_states


def checkpoint(model, path):
    save_checkpoint(model, path)


def finish(model, out_dir):
    checkpoint(model, f"{out_dir}/final.pt")  # clean
