import torch
import torch.nn as nn


class RNN(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.W, self.U = nn.Linear(n_in, n_hidden), nn.Linear(n_hidden, n_hidden)
        self.n_hidden = n_hidden

    def forward(self, x):
        T, B, _ = x.shape
        hs = torch.zeros(T + 1, B, self.n_hidden)
        for t in range(T):
            h = torch.tanh(self.W(x[t]) + self.U(hs[t]))
            hs = hs.clone()
            hs[t + 1] = h
        return hs[1:]


torch.manual_seed(0)
rnn = RNN(3, 4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
for _ in range(2):
    x = torch.randn(5, 2, 3)
    loss = head(rnn(x)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
