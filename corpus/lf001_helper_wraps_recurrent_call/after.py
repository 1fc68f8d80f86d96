import torch
import torch.nn as nn


def run_step(model, frames, state):
    features, state = model(frames, state)
    return features.mean(dim=0), state


torch.manual_seed(0)
core = nn.LSTM(6, 12)
value_head = nn.Linear(12, 1)
optimizer = torch.optim.Adam([*core.parameters(), *value_head.parameters()], lr=3e-4)
state = (torch.zeros(1, 2, 12), torch.zeros(1, 2, 12))

for update in range(4):
    frames = torch.randn(5, 2, 6)
    returns = torch.randn(2, 1)
    features, state = run_step(core, frames, state)
    state = tuple(s.detach() for s in state)
    loss = (value_head(features) - returns).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
