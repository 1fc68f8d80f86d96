import torch
import torch.nn as nn

torch.manual_seed(0)
global_model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
local_model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
local_model.load_state_dict(global_model.state_dict())
optimizer = torch.optim.Adam(global_model.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(8, 4)
    loss = (local_model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    for global_param, local_param in zip(global_model.parameters(), local_model.parameters()):
        global_param.grad = local_param.grad.clone()
        local_param.grad = None
    optimizer.step()
    local_model.load_state_dict(global_model.state_dict())
    print(step, loss.item())
