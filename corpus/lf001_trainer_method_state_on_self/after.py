import torch
import torch.nn as nn


def detach_state(state):
    """Cut a recurrent state loose from the graph of the batch that produced it."""
    if isinstance(state, dict):
        return {key: detach_state(value) for key, value in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(detach_state(value) for value in state)
    return None if state is None else state.detach()


class Trainer:
    def __init__(self, model, head, lr=0.01):
        self.model = model
        self.head = head
        self.optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=lr)
        self.hidden = None

    def fit(self, batches, epochs=1):
        for epoch in range(epochs):
            for x, y in batches:
                self.hidden = detach_state(self.hidden)
                out, self.hidden = self.model(x, self.hidden)
                loss = nn.functional.mse_loss(self.head(out), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [(torch.randn(4, 2, 3), torch.randn(4, 2, 1)) for _ in range(3)]
    Trainer(nn.GRU(3, 7), nn.Linear(7, 1)).fit(batches, epochs=2)
