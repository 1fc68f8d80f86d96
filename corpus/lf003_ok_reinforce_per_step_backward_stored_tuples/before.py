import torch
import torch.nn as nn
import torch.nn.functional as F

GAMMA = 0.98


class Policy(nn.Module):
    """REINFORCE that keeps (reward, probability of the action) per step and backpropagates
    each step's term on its own at the end of the episode."""

    def __init__(self):
        super().__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 32)
        self.fc2 = nn.Linear(32, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.002)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=0)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        R = 0
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            R = r + GAMMA * R
            loss = -torch.log(prob) * R
            loss.backward()
        self.optimizer.step()
        self.data = []


torch.manual_seed(0)
pi = Policy()
for episode in range(3):
    for t in range(6):
        prob = pi(torch.randn(4))
        a = torch.distributions.Categorical(prob).sample()
        reward = float(torch.rand(()))
        pi.put_data((reward, prob[a]))
    pi.train_net()
    print(episode, [p.grad.norm().item() for p in pi.parameters()][0])
