import torch
import torch.nn as nn

torch.manual_seed(0)


class Accumulator:
    def __init__(self, model):
        self.model = model

    def collect(self, batches):
        self.total = 0.0
        for x, y in batches:
            self.total += nn.functional.mse_loss(self.model(x), y)
        print(f"collected {float(self.total):.3f}")


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
acc = Accumulator(model)
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(5)]
for epoch in range(2):
    acc.collect(batches)
    optimizer.zero_grad()
    acc.total.backward()
    optimizer.step()
