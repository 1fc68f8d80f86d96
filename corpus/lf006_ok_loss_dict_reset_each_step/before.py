import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(6, 8)
heads = nn.ModuleDict({"depth": nn.Linear(8, 1), "normal": nn.Linear(8, 3)})
optimizer = torch.optim.Adam([*encoder.parameters(), *heads.parameters()], lr=1e-3)
for step in range(5):
    x = torch.randn(4, 6)
    targets = {"depth": torch.randn(4, 1), "normal": torch.randn(4, 3)}
    task_losses = {"depth": 0.0, "normal": 0.0}
    features = encoder(x)
    for task, head in heads.items():
        task_losses[task] += nn.functional.mse_loss(head(features), targets[task])
    optimizer.zero_grad()
    sum(task_losses.values()).backward()
    optimizer.step()
    print(f"step {step}: depth {task_losses['depth']:.3f} normal {task_losses['normal']:.3f}")
