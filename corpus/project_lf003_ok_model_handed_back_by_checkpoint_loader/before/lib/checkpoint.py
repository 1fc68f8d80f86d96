import torch


def load(model, optimizer, scheduler, resume, path):
    """Start from scratch, or restore the three objects' states from `path` in place."""
    if not resume:
        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                torch.nn.init.zeros_(module.bias)
        return model, optimizer, scheduler, 1
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    return model, optimizer, scheduler, state["epoch"]
