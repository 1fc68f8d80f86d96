import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.value = nn.Linear(16, 1)

    def forward(self, x):
        return self.value(torch.relu(self.body(x)))


class Agent:
    def __init__(self, model):
        self.model = model


def ensure_shared_grads(model, shared_model, gpu=False):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None and not gpu:
            return
        elif not gpu:
            shared_param._grad = param.grad
        else:
            shared_param._grad = param.grad.cpu()


def train(rank, shared_model, optimizer):
    torch.manual_seed(rank)
    player = Agent(ActorCritic())
    for step in range(4):
        player.model.load_state_dict(shared_model.state_dict())
        states, returns = torch.randn(6, 4), torch.randn(6, 1)
        loss = (returns - player.model(states)).pow(2).mean()
        player.model.zero_grad()
        loss.backward()
        ensure_shared_grads(player.model, shared_model, gpu=True)
        optimizer.step()
        print(rank, step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    shared_model = ActorCritic()
    shared_model.share_memory()
    optimizer = optim.SGD(shared_model.parameters(), lr=0.01)
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, shared_model, optimizer))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
