import threading

import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def train(global_model, rank, steps=5):
    torch.manual_seed(rank)
    local_model = make_model()
    local_model.load_state_dict(global_model.state_dict())
    optimizer = torch.optim.Adam(global_model.parameters(), lr=1e-3)
    for step in range(steps):
        x = torch.randn(8, 4)
        loss = (local_model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        for global_param, local_param in zip(global_model.parameters(), local_model.parameters()):
            global_param._grad = local_param.grad
        optimizer.step()
        local_model.zero_grad()
        local_model.load_state_dict(global_model.state_dict())
        print(rank, step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    global_model = make_model()
    worker = threading.Thread(target=train, args=(global_model, 1))
    worker.start()
    worker.join()
