import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.LSTM(3, 8)
classifier = nn.Linear(8, 4)
optimizer = torch.optim.Adam([*rnn.parameters(), *classifier.parameters()], lr=1e-2)
hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))

for step in range(4):
    x, label = torch.randn(6, 2, 3), torch.randint(0, 4, (2,))
    hidden = tuple(s.detach() for s in hidden)
    _, hidden = rnn(x, hidden)
    h_n, c_n = hidden
    loss = nn.functional.cross_entropy(classifier(h_n[-1]), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
