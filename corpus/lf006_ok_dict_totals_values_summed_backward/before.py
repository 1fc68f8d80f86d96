import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(16, 4), torch.randn(16, 2)) for _ in range(5)]
for epoch in range(2):
    totals = {"a": 0.0, "b": 0.0}
    for x, y in batches:
        out = model(x)
        totals["a"] += nn.functional.mse_loss(out[:, 0], y[:, 0])
        totals["b"] += nn.functional.l1_loss(out[:, 1], y[:, 1])
    opt.zero_grad()
    sum(total for total in totals.values()).backward()
    opt.step()
