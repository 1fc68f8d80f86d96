import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(3, 6)
        self.fc = nn.Linear(6, 3)

    def forward(self, seq, hidden):
        out, hidden = self.rnn(seq, hidden)
        return self.fc(out[-1]), hidden


class Learner:
    def __init__(self, network, lr=0.05):
        self.network = network
        self.optim = torch.optim.SGD(network.parameters(), lr=lr)
        self.hidden = torch.zeros(1, 2, 6)

    def train_batch(self, seq, labels):
        logits, self.hidden = self.network(seq, self.hidden)
        loss = nn.functional.cross_entropy(logits, labels)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss.item()

    def fit(self, stream):
        return [self.train_batch(seq, labels) for seq, labels in stream][-1]

    def fit_loop(self, stream):
        for seq, labels in stream:
            self.train_batch(seq, labels)
            self.hidden = self.hidden.detach()


if __name__ == "__main__":
    torch.manual_seed(0)
    learner = Learner(Classifier())
    learner.fit_loop([(torch.randn(4, 2, 3), torch.randint(0, 3, (2,))) for _ in range(3)])
