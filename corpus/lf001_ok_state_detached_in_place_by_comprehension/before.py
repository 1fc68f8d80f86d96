import torch
import torch.nn as nn

torch.manual_seed(0)
lstm = nn.LSTM(3, 4)
head = nn.Linear(4, 1)
optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
stream = torch.randn(20, 2, 3)
targets = torch.randn(20, 2, 1)
for i in range(0, 20, 5):
    out, hidden = lstm(stream[i : i + 5], hidden)
    [state.detach_() for state in hidden]  # truncate the backpropagation through time
    loss = nn.functional.mse_loss(head(out), targets[i : i + 5])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, round(loss.item(), 4), [state.requires_grad for state in hidden])
