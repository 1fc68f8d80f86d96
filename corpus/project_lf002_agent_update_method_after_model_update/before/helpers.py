import torch


def update_params(optim, network, loss, grad_clip=None):
    optim.zero_grad()
    loss.backward()
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(network.parameters(), grad_clip)
    optim.step()
