import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


torch.manual_seed(0)
shared_model = make_model()
local_model = make_model()
local_model.load_state_dict(shared_model.state_dict())
optimizer = torch.optim.SGD(shared_model.parameters(), lr=0.01)
accumulate = 3
for t in range(9):
    x = torch.randn(8, 4)
    loss = (local_model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean() / accumulate
    loss.backward()
    if (t + 1) % accumulate == 0:
        optimizer.zero_grad()
        for shared_param, local_param in zip(shared_model.parameters(), local_model.parameters()):
            shared_param._grad = local_param.grad
        optimizer.step()
        local_model.load_state_dict(shared_model.state_dict())
