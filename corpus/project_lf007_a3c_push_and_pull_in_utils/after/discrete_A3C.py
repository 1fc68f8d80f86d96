import torch
import torch.multiprocessing as mp
import torch.nn as nn
from utils import push_and_pull

UPDATE_GLOBAL_ITER = 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi1 = nn.Linear(4, 16)
        self.pi2 = nn.Linear(16, 2)
        self.v1 = nn.Linear(4, 16)
        self.v2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.pi2(torch.tanh(self.pi1(x))), self.v2(torch.tanh(self.v1(x)))

    def loss_func(self, states, returns):
        logits, values = self.forward(states)
        return (returns - values).pow(2).mean() - logits.log_softmax(-1).mean()


class SharedAdam(torch.optim.Adam):
    def __init__(self, params, lr=1e-3):
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.tensor(0.0)
                state["exp_avg"] = torch.zeros_like(p.data).share_memory_()
                state["exp_avg_sq"] = torch.zeros_like(p.data).share_memory_()


class Worker(mp.Process):
    def __init__(self, gnet, opt, episodes):
        super().__init__()
        self.gnet, self.opt = gnet, opt
        self.lnet = Net()
        self.episodes = episodes

    def run(self):
        torch.manual_seed(0)
        for episode in range(self.episodes):
            buffer_s, buffer_r = [], []
            for t in range(1, 5):
                buffer_s.append(torch.randn(1, 4))
                buffer_r.append(torch.randn(1, 1))
                if t % UPDATE_GLOBAL_ITER == 0:
                    states, returns = torch.cat(buffer_s), torch.cat(buffer_r)
                    push_and_pull(self.opt, self.lnet, self.gnet, states, returns)
                    self.lnet.zero_grad()
                    buffer_s, buffer_r = [], []
            print(episode)


if __name__ == "__main__":
    torch.manual_seed(0)
    gnet = Net()
    gnet.share_memory()
    opt = SharedAdam(gnet.parameters(), lr=1e-4)
    workers = [Worker(gnet, opt, 2) for _ in range(2)]
    [w.start() for w in workers]
    [w.join() for w in workers]
