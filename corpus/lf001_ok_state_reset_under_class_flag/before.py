# An agent that resets its recurrent state on every step under a setting its __init__ binds
# once (`self.reset_each_step = True`, nothing else sets it): each backward goes through
# that step's graph only.
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.rnn = nn.GRUCell(4, 8)
        self.head = nn.Linear(8, 1)
        self.optimizer = torch.optim.Adam(
            list(self.rnn.parameters()) + list(self.head.parameters()), lr=1e-3
        )
        self.reset_each_step = True
        self.h = torch.zeros(1, 8)

    def step(self, x, y):
        if self.reset_each_step:
            self.h = torch.zeros(1, 8)
        self.h = self.rnn(x, self.h)
        loss = (self.head(self.h) - y).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
agent = Agent()
for t in range(5):
    agent.step(torch.randn(1, 4), torch.randn(1, 1))
