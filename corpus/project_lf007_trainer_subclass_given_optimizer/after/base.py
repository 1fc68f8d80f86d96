class TrainerBase:
    """Keeps what every trainer needs; subclasses implement `run_epoch`."""

    def __init__(self, network, loss_fn, optimizer, epochs):
        self.network = network
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.epochs = epochs

    def fit(self, batches):
        history = []
        for epoch in range(self.epochs):
            history.append(self.run_epoch(batches))
        return history
