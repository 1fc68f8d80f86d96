import torch
import torch.nn as nn

torch.manual_seed(0)
decoder = nn.GRUCell(4, 4)
optimizer = torch.optim.SGD(decoder.parameters(), lr=0.1)
frames = torch.randn(6, 2, 4)
for t in range(5):
    if t == 0:
        inp = torch.zeros(2, 4)
    else:
        inp = prev
    out = decoder(frames[t], inp)
    loss = (out - frames[t + 1]).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    prev = out
