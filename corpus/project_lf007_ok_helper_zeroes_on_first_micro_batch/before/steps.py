def backward_micro_batch(model, batch, accumulation_steps, first):
    """Backpropagate one micro-batch, scaled for accumulation; the first one of a step
    starts from cleared gradients."""
    inputs, targets = batch
    loss = (model(inputs) - targets).pow(2).mean()
    if first:
        model.zero_grad(set_to_none=True)
    (loss / accumulation_steps).backward()
    return loss.item()
