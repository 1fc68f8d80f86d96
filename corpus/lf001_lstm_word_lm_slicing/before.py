"""Word-level language model trained with truncated BPTT over one token stream."""
import torch
import torch.nn as nn

VOCAB, EMBED, HIDDEN, BPTT, BATCH = 50, 16, 32, 5, 4


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, EMBED)
        self.rnn = nn.LSTM(EMBED, HIDDEN, num_layers=2)
        self.decoder = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.encoder(tokens), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, batch_size):
        weight = next(self.parameters())
        return (weight.new_zeros(2, batch_size, HIDDEN), weight.new_zeros(2, batch_size, HIDDEN))


torch.manual_seed(0)
stream = torch.randint(0, VOCAB, (41, BATCH))
model = RNNModel()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

for epoch in range(2):
    model.train()
    hidden = model.init_hidden(BATCH)
    for i in range(0, stream.size(0) - 1, BPTT):
        data, targets = stream[i : i + BPTT], stream[i + 1 : i + 1 + BPTT]
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, VOCAB), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
