import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
head = nn.Linear(16, 4)
params = [*encoder.parameters(), *head.parameters()]
optimizer = torch.optim.Adam(params, lr=5e-4)
warmup = 4
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))

for step in range(6):
    tokens = torch.randn(2, 5, 16)
    labels = torch.randint(0, 4, (2,))
    logits = head(encoder(tokens).mean(dim=1))
    loss = nn.functional.cross_entropy(logits, labels)
    scheduler.step()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
