import torch
import torch.nn as nn

torch.manual_seed(0)
lstm, head = nn.LSTM(4, 8), nn.Linear(8, 1)
optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
data = torch.randn(30, 2, 4)

hidden = None
for t in range(0, 25, 5):
    out, hidden = lstm(data[t : t + 5], hidden)
    hidden = tuple(s.detach() for s in hidden)
    loss = head(out).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

lstm.eval()
total = 0.0
with torch.no_grad():
    hidden = None
    for t in range(0, 25, 5):
        out, hidden = lstm(data[t : t + 5], hidden)
        total += head(out).pow(2).mean().item()
with torch.inference_mode():
    state = None
    for t in range(0, 25, 5):
        out, state = lstm(data[t : t + 5], state)
print(f"eval loss {total:.4f}")
