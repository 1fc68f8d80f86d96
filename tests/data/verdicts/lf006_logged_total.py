import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
KEEP_GRAPH = bool(1)  # a call: which branch runs, only running it tells


def logged(loss):
    return loss if KEEP_GRAPH else loss.detach()


total_loss = 0.0
for x, y in batches:
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    total_loss += logged(loss)
print(float(total_loss))
