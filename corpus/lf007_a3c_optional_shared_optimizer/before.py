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


class SharedAdam(optim.Adam):
    def __init__(self, params, lr=1e-3):
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.tensor(0.0)
                state["exp_avg"] = torch.zeros_like(p.data).share_memory_()
                state["exp_avg_sq"] = torch.zeros_like(p.data).share_memory_()


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad


def train(rank, shared_model, optimizer=None):
    torch.manual_seed(rank)
    model = ActorCritic()
    if optimizer is None:
        optimizer = optim.Adam(shared_model.parameters(), lr=1e-3)
    for step in range(4):
        model.load_state_dict(shared_model.state_dict())
        states, returns = torch.randn(6, 4), torch.randn(6, 1)
        loss = (returns - model(states)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        ensure_shared_grads(model, shared_model)
        optimizer.step()
        print(rank, step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    shared_model = ActorCritic()
    shared_model.share_memory()
    if os.environ.get("NO_SHARED"):
        optimizer = None
    else:
        optimizer = SharedAdam(shared_model.parameters(), lr=1e-3)
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, shared_model, optimizer))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
