import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(5)]
for epoch in range(2):
    totals = {"mse": 0.0, "l1": 0.0}
    for x, y in batches:
        out = model(x)
        mse = nn.functional.mse_loss(out, y)
        l1 = nn.functional.l1_loss(out, y)
        opt.zero_grad()
        (mse + l1).backward()
        opt.step()
        totals["mse"] += mse
        totals["l1"] += l1
    for name, value in totals.items():
        print(f"{name}: {value / len(batches):.4f}")
