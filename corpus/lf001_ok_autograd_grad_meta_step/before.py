import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.RNN(3, 4)
params = list(rnn.parameters())
state = torch.zeros(1, 2, 4)
for episode in range(4):
    x = torch.randn(5, 2, 3)
    out, state = rnn(x, state)
    loss = out.pow(2).mean()
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, g in zip(params, grads):
            p -= 0.1 * g
    state = state.detach()
