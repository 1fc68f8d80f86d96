"""Auxiliary losses, each running its own backward when asked (a diversity term on the
discriminator's features, as a GAN zoo's GDPP loss does)."""

import torch


def diversity_loss(features, backward=True):
    normalised = features / features.norm(dim=1, keepdim=True)
    similarity = normalised @ normalised.t()
    loss = (similarity - torch.eye(similarity.shape[0])).pow(2).mean()
    if backward:
        loss.backward()
    return loss.item()
