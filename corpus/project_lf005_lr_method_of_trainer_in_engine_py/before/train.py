import torch

from engine import Engine


def main():
    torch.manual_seed(0)
    engine = Engine()
    batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(3)]
    for epoch in range(3):
        engine.decay_learning_rate()
        for x, y in batches:
            loss = engine.train_batch(x, y)
        print(f"epoch {epoch}: loss {loss:.4f}")


if __name__ == "__main__":
    main()
