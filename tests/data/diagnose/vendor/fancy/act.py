def bias_act_(bias, x):
    """A fused bias + activation that works in place (saves memory)."""
    x += bias
    return x.clamp_(min=-1.0, max=1.0)
