from base import TrainerBase


class RegressionTrainer(TrainerBase):
    def __init__(self, network, loss_fn, optimizer, epochs=2, log_every=10):
        super().__init__(network, loss_fn, optimizer, epochs)
        self.log_every = log_every

    def run_epoch(self, batches):
        total = 0.0
        for inputs, targets in batches:
            loss = self.loss_fn(self.network(inputs), targets)
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total / len(batches)
