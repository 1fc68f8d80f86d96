import torch
import torch.nn as nn

from metrics import SmoothedValue


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 24), nn.ReLU(), nn.Linear(24, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randn(12, 10), torch.randint(0, 3, (12,))) for _ in range(5)]
    smoothed = SmoothedValue()
    for epoch in range(2):
        smoothed.reset()
        for inputs, labels in batches:
            loss = nn.functional.cross_entropy(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            smoothed.update(loss, inputs.size(0))
        print(f"epoch {epoch}: loss {smoothed.average:.4f}")


if __name__ == "__main__":
    main()
