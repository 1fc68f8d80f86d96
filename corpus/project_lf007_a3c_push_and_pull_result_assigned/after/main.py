import torch
import torch.multiprocessing as mp
import torch.nn as nn

from utils import push_and_pull


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


class Worker(mp.Process):
    def __init__(self, gnet, opt, rank):
        super().__init__()
        self.gnet, self.opt, self.rank = gnet, opt, rank
        self.lnet = Net()

    def run(self):
        torch.manual_seed(self.rank)
        self.lnet.load_state_dict(self.gnet.state_dict())
        for step in range(4):
            x = torch.randn(8, 4)
            loss = push_and_pull(self.opt, self.lnet, self.gnet, x, 1.0)
            self.lnet.zero_grad()
            print(self.rank, step, round(loss, 4))


if __name__ == "__main__":
    torch.manual_seed(0)
    gnet = Net()
    gnet.share_memory()
    opt = torch.optim.Adam(gnet.parameters(), lr=1e-3)
    workers = [Worker(gnet, opt, r) for r in range(2)]
    for wk in workers:
        wk.start()
    for wk in workers:
        wk.join()
