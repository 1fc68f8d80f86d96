import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.RNN(input_size=5, hidden_size=8, num_layers=1)
proj = nn.Linear(8, 1)
optimizer = torch.optim.RMSprop([*rnn.parameters(), *proj.parameters()], lr=1e-3)
batches = [(torch.randn(6, 3, 5), torch.randn(6, 3, 1)) for _ in range(4)]

hidden = None
for x, y in batches:
    output, hidden = rnn(x, hidden)
    hidden = hidden.detach()
    loss = nn.functional.mse_loss(proj(output), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
