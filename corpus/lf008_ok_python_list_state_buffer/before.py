import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d=8, hd=16):
        super().__init__()
        self.W = nn.Linear(d, hd)
        self.U = nn.Linear(hd, hd, bias=False)
        self.out = nn.Linear(hd, 1)

    def forward(self, x):
        T = x.size(0)
        hs = [None] * (T + 1)
        hs[0] = x.new_zeros(x.size(1), 16)
        for t in range(T):
            hs[t + 1] = torch.tanh(self.W(x[t]) + self.U(hs[t]))
        return self.out(hs[-1])


torch.manual_seed(0)
model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(6, 4, 8), torch.randn(4, 1)
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
