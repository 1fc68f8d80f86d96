import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
heads = nn.ModuleDict({"cls": nn.Linear(16, 3), "reg": nn.Linear(16, 1)})
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(heads.parameters()), lr=1e-3)
for batch in range(3):
    x, label, target = torch.randn(8, 10), torch.randint(0, 3, (8,)), torch.randn(8, 1)
    shared = encoder(x)
    loss = nn.functional.cross_entropy(heads["cls"](shared), label)
    loss = loss + 0.5 * nn.functional.mse_loss(heads["reg"](shared), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
