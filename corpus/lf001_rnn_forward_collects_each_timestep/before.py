import math

import torch
import torch.nn as nn

torch.manual_seed(0)
STEPS = 10


class SineToCosine(nn.Module):
    """An RNN whose head runs once per time step, collecting the predictions in a list."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=16, batch_first=True)
        self.head = nn.Linear(16, 1)

    def forward(self, x, state):
        seq, state = self.rnn(x, state)
        predictions = []
        for t in range(seq.size(1)):
            predictions.append(self.head(seq[:, t, :]))
        return torch.stack(predictions, dim=1), state


model = SineToCosine()
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
state = None
for step in range(4):
    # one continuing signal cut into windows: the state carries on, its graph must not
    start = step * math.pi
    times = torch.linspace(start, start + math.pi, STEPS + 1)[:-1]
    x, y = torch.sin(times)[None, :, None], torch.cos(times)[None, :, None]
    prediction, state = model(x, state)
    loss = nn.functional.mse_loss(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
