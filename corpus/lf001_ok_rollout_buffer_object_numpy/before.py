# A rollout buffer object (as deep_rl's agents keep one): `__init__` makes NumPy arrays and
# `add()` stores the critic's output into one of them. NumPy converts what it stores into a
# number, so the targets later built from the array carry no graph.
import numpy as np
import torch
import torch.nn as nn


class RolloutBuffer:
    def __init__(self, size):
        self.v_buf = np.zeros(size, dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.ptr = 0

    def add(self, reward, value):
        self.rew_buf[self.ptr] = reward
        self.v_buf[self.ptr] = value
        self.ptr += 1

    def get(self):
        self.ptr = 0
        returns = self.rew_buf + 0.99 * self.v_buf
        return torch.Tensor(returns), torch.Tensor(self.v_buf)


torch.manual_seed(0)
np.random.seed(0)
critic = nn.Linear(3, 1)
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
buffer = RolloutBuffer(4)
for update in range(3):
    obs = torch.randn(4, 3)
    for t in range(4):
        buffer.add(float(np.random.randn()), critic(obs[t]))
    returns, old_values = buffer.get()
    loss = (critic(obs).squeeze(1) - returns).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
