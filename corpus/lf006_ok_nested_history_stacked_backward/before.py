import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(4)]
for epoch in range(2):
    history = {"train": {"loss": []}}
    for x, y in batches:
        history["train"]["loss"].append(nn.functional.mse_loss(model(x), y))
    opt.zero_grad()
    total = torch.stack(history["train"]["loss"]).mean()
    print(f"{total.item():.3f}")
    total.backward()
    opt.step()
