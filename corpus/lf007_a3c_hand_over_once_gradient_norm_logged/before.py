import torch
import torch.nn as nn


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad


torch.manual_seed(0)
shared_model = nn.Linear(3, 1)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(shared_model.parameters(), lr=0.01)
for step in range(4):
    model.load_state_dict(shared_model.state_dict())
    x = torch.randn(4, 3)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    ensure_shared_grads(model, shared_model)
    optimizer.step()
    grad_norm = shared_model.weight.grad.norm().item()
    print(f"step {step}: loss {loss.item():.4f}, shared gradient norm {grad_norm:.4f}")
