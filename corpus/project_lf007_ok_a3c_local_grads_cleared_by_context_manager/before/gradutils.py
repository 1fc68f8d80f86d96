class LocalUpdate:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        return self.model

    def __exit__(self, *exc):
        for p in self.model.parameters():
            p.grad = None
        return False
