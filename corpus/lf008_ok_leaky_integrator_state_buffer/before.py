import torch
import torch.nn as nn


class LeakyIntegrator(nn.Module):
    """Each state decays the previous one and adds a drive computed from the input only."""

    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.W = nn.Linear(n_in, n_hidden)
        self.n_hidden = n_hidden

    def forward(self, x):
        T, B, _ = x.shape
        hs = torch.zeros(T + 1, B, self.n_hidden)
        for t in range(T):
            hs[t + 1] = 0.9 * hs[t] + torch.tanh(self.W(x[t]))
        return hs[1:]


torch.manual_seed(0)
rnn = LeakyIntegrator(3, 4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
for _ in range(2):
    x = torch.randn(5, 2, 3)
    loss = head(rnn(x)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(loss.item())
