import torch
import torch.multiprocessing as mp
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi = nn.Linear(4, 2)
        self.v = nn.Linear(4, 1)

    def forward(self, x):
        return self.pi(x), self.v(x)


class SharedAdam(torch.optim.Adam):
    """Adam whose state lives in shared memory, for workers in other processes."""

    def __init__(self, params, lr=1e-3):
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.tensor(0.0)
                state["exp_avg"] = torch.zeros_like(p.data).share_memory_()
                state["exp_avg_sq"] = torch.zeros_like(p.data).share_memory_()


def push_and_pull(opt, lnet, gnet, states, returns):
    logits, values = lnet(states)
    loss = (returns - values).pow(2).mean() - logits.log_softmax(-1).mean()
    opt.zero_grad()
    loss.backward()
    for lp, gp in zip(lnet.parameters(), gnet.parameters()):
        gp._grad = lp.grad
    opt.step()
    lnet.load_state_dict(gnet.state_dict())


class Worker(mp.Process):
    def __init__(self, gnet, opt, steps):
        super().__init__()
        self.gnet, self.opt = gnet, opt
        self.lnet = Net()
        self.steps = steps

    def run(self):
        torch.manual_seed(0)
        for step in range(self.steps):
            states, returns = torch.randn(8, 4), torch.randn(8, 1)
            push_and_pull(self.opt, self.lnet, self.gnet, states, returns)
            print(step)


if __name__ == "__main__":
    torch.manual_seed(0)
    gnet = Net()
    gnet.share_memory()
    opt = SharedAdam(gnet.parameters(), lr=1e-3)
    workers = [Worker(gnet, opt, 4) for _ in range(2)]
    [w.start() for w in workers]
    [w.join() for w in workers]
