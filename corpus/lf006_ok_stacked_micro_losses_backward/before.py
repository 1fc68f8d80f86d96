# Gradient accumulation through a list: the micro-batches' losses are stacked and their mean is
# backpropagated once per step, which needs every micro-batch's graph.
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 4))
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.05)

for step in range(3):
    micro_losses = []
    for chunk in range(4):
        x, label = torch.randn(3, 10), torch.randint(0, 4, (3,))
        micro_losses.append(nn.functional.cross_entropy(encoder(x), label))
    optimizer.zero_grad()
    torch.stack(micro_losses).mean().backward()
    optimizer.step()
    print(f"step {step}: {torch.stack(micro_losses).mean().item():.4f}")
