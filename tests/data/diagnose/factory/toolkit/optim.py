import torch


def build(config, params):
    kind = config["kind"]
    return getattr(torch.optim, kind)(params, lr=config["lr"])
