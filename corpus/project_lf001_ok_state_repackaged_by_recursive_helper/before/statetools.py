import torch


def repackage(h):
    if h is None:
        return None
    if torch.is_tensor(h):
        return h.detach()
    return tuple(map(repackage, h))
