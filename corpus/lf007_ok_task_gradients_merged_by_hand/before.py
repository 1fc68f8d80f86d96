import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

# Multi-task gradient surgery (PCGrad-style): each task's gradient is taken alone, the
# conflicting parts are projected away, and the merged gradient is written back into `.grad`
# before the step; zero_grad() in the loop over tasks is what keeps the tasks apart
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
params = list(model.parameters())


def merge(grads):
    merged = []
    for i, g in enumerate(grads):
        g = g.clone()
        for j, other in enumerate(grads):
            dot = torch.dot(g, other)
            if i != j and dot < 0:
                g -= dot / other.norm() ** 2 * other
        merged.append(g)
    return torch.stack(merged).mean(0)


for step in range(5):
    x, y = torch.randn(4, 8), torch.randn(4, 3)
    task_grads = []
    for task in range(3):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x)[:, task], y[:, task])
        loss.backward()
        task_grads.append(parameters_to_vector([p.grad for p in params]).clone())
    merged = merge(task_grads)
    vector_to_parameters(merged, [p.grad for p in params])
    assert torch.equal(parameters_to_vector([p.grad for p in params]), merged)
    optimizer.step()
