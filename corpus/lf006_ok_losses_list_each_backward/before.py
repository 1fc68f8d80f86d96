import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(4)]
for epoch in range(2):
    losses = []
    for x, y in batches:
        losses.append(nn.functional.mse_loss(model(x), y))
    opt.zero_grad()
    for loss in losses:
        print(f"{loss.item():.3f}")
        loss.backward()
    opt.step()
