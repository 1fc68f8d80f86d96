import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
inputs, targets = torch.randn(24, 7, 3), torch.randn(24, 1)
loader = DataLoader(TensorDataset(inputs, targets), batch_size=8, drop_last=True)

lstm = nn.LSTM(input_size=3, hidden_size=12, batch_first=True)
head = nn.Linear(12, 1)
optimizer = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=1e-2)
loss_fn = nn.MSELoss()

for epoch in range(2):
    state = (torch.zeros(1, 8, 12), torch.zeros(1, 8, 12))
    for x, y in loader:
        out, state = lstm(x, state)
        state = tuple(s.detach() for s in state)
        prediction = head(out[:, -1])
        loss = loss_fn(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
