"""Loss objects that own their update: each keeps the optimizer it was built with, clears it,
backpropagates its loss and steps it."""

import torch
import torch.nn.functional as F


class DiscriminatorLoss:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __call__(self, real_logits, fake_logits):
        self.optimizer.zero_grad()
        real = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
        fake = F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        loss = real + fake
        loss.backward()
        self.optimizer.step()
        return loss.item()


class GeneratorLoss:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __call__(self, fake_logits):
        self.optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))
        loss.backward()
        self.optimizer.step()
        return loss.item()
