import torch


def create_model(kind):
    if kind == "single":
        from drgan import DRGAN

        model = DRGAN()
    else:
        raise ValueError(kind)
    model.initialize()
    return model
