import torch
import torch.nn as nn

from solver import Solver

if __name__ == "__main__":
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    discriminator = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    solver = Solver(generator, discriminator)
    for _ in range(4):
        print(solver.train_step(torch.randn(8, 8)))
