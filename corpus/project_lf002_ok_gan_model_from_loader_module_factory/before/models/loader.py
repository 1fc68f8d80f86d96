from .drgan import DRGAN


def create_model(kind):
    model = None
    if kind == "single":
        model = DRGAN()
    model.initialize()
    return model
