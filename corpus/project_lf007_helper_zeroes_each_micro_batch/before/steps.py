def backward_micro_batch(model, batch, accumulation_steps):
    """Backpropagate one micro-batch, scaled for accumulation."""
    inputs, targets = batch
    loss = (model(inputs) - targets).pow(2).mean()
    model.zero_grad(set_to_none=True)
    (loss / accumulation_steps).backward()
    return loss.item()
