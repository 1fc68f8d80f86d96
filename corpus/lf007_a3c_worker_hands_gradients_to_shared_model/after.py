import torch
import torch.nn as nn

torch.manual_seed(0)
global_model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
local_model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
local_model.load_state_dict(global_model.state_dict())
optimizer = torch.optim.SGD(global_model.parameters(), lr=0.01)
for step in range(5):
    x = torch.randn(8, 4)
    loss = (local_model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    for global_param, local_param in zip(global_model.parameters(), local_model.parameters()):
        global_param._grad = local_param.grad
    optimizer.step()
    local_model.zero_grad()
    local_model.load_state_dict(global_model.state_dict())
    print(step, loss.item())
