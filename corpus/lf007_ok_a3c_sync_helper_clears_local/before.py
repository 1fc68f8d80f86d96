import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        shared_param._grad = param.grad


def sync(local, shared):
    """Pull the shared weights and start the next update from clean gradients."""
    local.load_state_dict(shared.state_dict())
    local.zero_grad()


torch.manual_seed(0)
shared_model = make_model()
local_model = make_model()
optimizer = torch.optim.Adam(shared_model.parameters(), lr=1e-3)
for step in range(5):
    sync(local_model, shared_model)
    x = torch.randn(8, 4)
    loss = (local_model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    ensure_shared_grads(local_model, shared_model)
    optimizer.step()
    print(step, loss.item())
