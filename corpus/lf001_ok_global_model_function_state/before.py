import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.RNN(3, 16, batch_first=True)
readout = nn.Linear(16, 3)
optimizer = torch.optim.SGD([*rnn.parameters(), *readout.parameters()], lr=0.05)
hidden = torch.zeros(1, 2, 16)


def train_step(x, y):
    global hidden
    out, new_hidden = rnn(x, hidden)
    hidden = new_hidden.detach()
    loss = nn.functional.mse_loss(readout(out), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


stream = torch.randn(2, 41, 3)
for t in range(0, 40, 8):
    train_step(stream[:, t : t + 8], stream[:, t + 1 : t + 9])
