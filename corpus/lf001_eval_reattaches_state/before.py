# A GRU forecaster trained on consecutive chunks of one series, with a validation pass inside
# the training loop every other chunk that runs the GRU on the state without torch.no_grad().
import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRU(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
series = torch.randn(60, 1, 4)
val = torch.randn(10, 1, 4)

hidden = torch.zeros(1, 1, 8)
for step, start in enumerate(range(0, 50, 10)):
    chunk = series[start:start + 10]
    out, hidden = rnn(chunk, hidden)
    loss = head(out).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 2 == 1:
        val_out, hidden = rnn(val, hidden)
        print("validation", head(val_out).pow(2).mean().item())
