import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self):
        self.rnn = nn.GRU(4, 8)
        self.head = nn.Linear(8, 1)
        params = [*self.rnn.parameters(), *self.head.parameters()]
        self.optimizer = torch.optim.SGD(params, lr=0.1)

    def fit(self, batches):
        hidden = torch.zeros(1, 2, 8)

        def repackage():
            nonlocal hidden
            hidden = hidden.detach()

        for x, y in batches:
            repackage()
            out, hidden = self.rnn(x, hidden)
            loss = (self.head(out) - y).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            print(loss.item())


def main():
    batches = [(torch.randn(3, 2, 4), torch.randn(3, 2, 1)) for _ in range(4)]
    Trainer().fit(batches)


main()
