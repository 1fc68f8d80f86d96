import torch
import torch.nn as nn

torch.manual_seed(0)
lstm = nn.LSTM(4, 8)
fc = nn.Linear(8, 2)
optimizer = torch.optim.SGD([*lstm.parameters(), *fc.parameters()], lr=0.1)
hidden = (torch.zeros(1, 3, 8), torch.zeros(1, 3, 8))

for batch in range(4):
    x = torch.randn(5, 3, 4)
    y = torch.randint(0, 2, (3,))
    out, hidden = lstm(x, hidden)
    hidden = tuple(s.detach() for s in hidden)
    loss = nn.functional.cross_entropy(fc(out[-1]), y)
    optimizer.zero_grad()
    loss.backward()  # "fixes" the first error
    optimizer.step()
