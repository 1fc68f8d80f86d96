import torch


def make_optimizer(model, lr=0.1):
    """SGD whose every step is followed by clearing the gradients it used."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def clear_after_step(optimizer, args, kwargs):
        optimizer.zero_grad(set_to_none=True)

    optimizer.register_step_post_hook(clear_after_step)
    return optimizer
