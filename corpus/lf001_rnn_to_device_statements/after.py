import torch
import torch.nn as nn

n_chars, hidden_size, seq_len, batch = 20, 24, 6, 4


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(n_chars, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.fc = nn.Linear(hidden_size, n_chars)

    def forward(self, x, hidden):
        out, hidden = self.gru(self.embed(x), hidden)
        return self.fc(out), hidden


torch.manual_seed(0)
device = "cpu"
rnn = CharRNN()
rnn.to(device)
rnn = rnn.double()
rnn.train()
optimizer = torch.optim.Adam(rnn.parameters(), lr=3e-3)
criterion = nn.CrossEntropyLoss()
text = torch.randint(0, n_chars, (batch, 61))

hidden = torch.zeros(1, batch, hidden_size, dtype=torch.float64, device=device)
for i in range(0, 60, seq_len):
    inp, target = text[:, i : i + seq_len], text[:, i + 1 : i + 1 + seq_len]
    output, hidden = rnn(inp.to(device), hidden)
    hidden = hidden.detach()
    loss = criterion(output.reshape(-1, n_chars), target.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
