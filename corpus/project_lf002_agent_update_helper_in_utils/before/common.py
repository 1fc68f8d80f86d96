import torch


def optimise(optimizer, loss, clip=None, params=None):
    """One optimizer update: clear, backpropagate, optionally clip, step."""
    optimizer.zero_grad()
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()


def polyak(target, online, rate):
    with torch.no_grad():
        for tp, p in zip(target.parameters(), online.parameters()):
            tp.lerp_(p, rate)
