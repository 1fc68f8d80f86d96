import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
WARMUP_BATCHES = 0


def train_step(x, y):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()


for x, y in batches[:WARMUP_BATCHES]:  # a warm-up pass at the first learning rate
    train_step(x, y)
for _epoch in range(3):
    scheduler.step()
    for x, y in batches:
        train_step(x, y)
