import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


class SharedAdam(torch.optim.Adam):
    """Adam for workers that share their gradient tensors: zeroed in place, never dropped."""

    def zero_grad(self, set_to_none=False):
        super().zero_grad(set_to_none=set_to_none)


torch.manual_seed(0)
shared_model = make_model()
local_model = make_model()
local_model.load_state_dict(shared_model.state_dict())
optimizer = SharedAdam(shared_model.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(8, 4)
    loss = (local_model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    for shared_param, local_param in zip(shared_model.parameters(), local_model.parameters()):
        shared_param._grad = local_param.grad
    optimizer.step()
    local_model.load_state_dict(shared_model.state_dict())
