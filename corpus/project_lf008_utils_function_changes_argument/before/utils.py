import torch


def clip_probs(p, eps=1e-6):
    """Keeps probabilities away from 0 and 1 before a log (in place)."""
    p.clamp_(eps, 1 - eps)
    return p
