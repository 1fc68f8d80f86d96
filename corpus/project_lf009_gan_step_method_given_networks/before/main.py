import torch
import torch.nn as nn

from trainer import GanTrainer

if __name__ == "__main__":
    g = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
    d = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    trainer = GanTrainer(g, d)
    for _ in range(3):
        trainer.step(torch.randn(5, 4), torch.randn(5, 3))
