def mask_probs(probs, mask=None):
    """Zero the probabilities of the masked positions (pointer networks' padding)."""
    if mask is not None:
        probs[mask] = 0.0
    return probs
