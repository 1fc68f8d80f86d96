import torch
import torch.nn as nn

w = nn.Parameter(torch.randn(4, 4))  # a bare Parameter, stepped by opt_a
head = nn.Linear(4, 1)
opt_a = torch.optim.SGD([w], lr=0.1)
opt_b = torch.optim.SGD(head.parameters(), lr=0.1)
for step in range(3):
    h = torch.tanh(torch.randn(5, 4) @ w)
    loss_a = h.pow(2).mean()
    loss_b = head(h).mean()
    opt_a.zero_grad()
    loss_a.backward(retain_graph=True)
    opt_a.step()
    opt_b.zero_grad()
    loss_b.backward()  # matmul kept the data, not w, for the gradient of w
    opt_b.step()
