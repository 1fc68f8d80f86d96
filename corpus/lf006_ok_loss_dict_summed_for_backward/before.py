import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(5, 2)
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5)
batches = [(torch.randn(8, 5), torch.randn(8, 2)) for _ in range(3)]


def closure():
    optimizer.zero_grad()
    totals = {"fit": 0.0, "smooth": 0.0}
    for x, y in batches:
        out = model(x)
        totals["fit"] += nn.functional.mse_loss(out, y)
        totals["smooth"] += 1e-3 * out.diff(dim=1).pow(2).mean()
    loss = totals["fit"] + totals["smooth"]
    loss.backward()
    return loss


for epoch in range(3):
    print(f"epoch {epoch}: {optimizer.step(closure).item():.4f}")
