import torch
import torch.nn as nn


class Worker:
    def __init__(self, enable_lstm):
        self.enable_lstm = enable_lstm
        self.cell, self.head = nn.LSTMCell(4, 8), nn.Linear(8, 1)
        self.body = nn.Linear(4, 8)
        parameters = [*self.cell.parameters(), *self.head.parameters(), *self.body.parameters()]
        self.optimizer = torch.optim.SGD(parameters, lr=0.01)
        self.hidden = (torch.zeros(1, 8), torch.zeros(1, 8))

    def _reset_rollout(self):
        self.hidden = (self.hidden[0].detach(), self.hidden[1].detach())

    def _rollout(self):
        values = []
        for t in range(5):
            x = torch.randn(1, 4)
            if self.enable_lstm:
                self.hidden = self.cell(x, self.hidden)
                values.append(self.head(self.hidden[0]))
            else:
                values.append(self.head(torch.relu(self.body(x))))
        return torch.cat(values).pow(2).mean()

    def run(self, steps):
        for step in range(steps):
            if self.enable_lstm:
                self._reset_rollout()
            loss = self._rollout()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


torch.manual_seed(0)
Worker(True).run(4)
Worker(False).run(4)
