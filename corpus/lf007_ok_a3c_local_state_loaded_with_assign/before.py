import torch
import torch.multiprocessing as mp
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def worker(rank, shared, optimizer):
    torch.manual_seed(rank)
    local = Net()
    for step in range(4):
        local.load_state_dict({k: v.clone() for k, v in shared.state_dict().items()}, assign=True)
        x = torch.randn(8, 4)
        loss = (local(x) - 1).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        for sp, lp in zip(shared.parameters(), local.parameters()):
            sp._grad = lp.grad
        optimizer.step()
        print(rank, step, round(loss.item(), 4))


if __name__ == "__main__":
    torch.manual_seed(0)
    shared = Net()
    shared.share_memory()
    optimizer = torch.optim.SGD(shared.parameters(), lr=0.05)
    procs = [mp.Process(target=worker, args=(r, shared, optimizer)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
