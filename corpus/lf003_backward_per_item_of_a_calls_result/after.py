# Per-timestep losses of a sequence model, backpropagated as the loop walks the output's
# timesteps straight from the call (`for t, step in enumerate(rnn(x)[0].unbind(1))`): every
# timestep is a piece of one output, so the first backward frees the graph that the second
# timestep's loss still goes through.
import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
for step in range(3):
    x, y = torch.randn(2, 5, 4), torch.randn(2, 5, 1)
    optimizer.zero_grad()
    for t, out in enumerate(rnn(x)[0].unbind(1)):
        loss = (head(out) - y[:, t]).pow(2).mean()
        loss.backward(retain_graph=True)
    optimizer.step()
