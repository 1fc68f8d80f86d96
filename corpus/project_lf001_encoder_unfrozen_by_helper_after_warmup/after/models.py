import torch.nn as nn


def pretrained_encoder():
    """A recurrent encoder loaded frozen (its weights are not trained at first)."""
    encoder = nn.GRU(3, 6)
    for parameter in encoder.parameters():
        parameter.requires_grad_(False)
    return encoder


def unfreeze(module):
    """Train the module's weights again (fine-tuning after the warm-up)."""
    for parameter in module.parameters():
        parameter.requires_grad_(True)
