import torch
import torch.nn as nn

import optim_utils


class CharModel(nn.Module):
    def __init__(self, vocab=50, hidden_size=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab)

    def forward(self, tokens, hidden):
        output, hidden = self.gru(self.embed(tokens), hidden)
        return self.head(output), hidden


def run(model, batches, optimizer, criterion):
    hidden = torch.zeros(1, batches.size(1), 32)
    for batch in batches:
        inputs, targets = batch[:, :-1], batch[:, 1:]
        output, hidden = model(inputs, hidden)
        loss = criterion(output.reshape(-1, 50), targets.reshape(-1))
        optim_utils.backprop(loss, optimizer)
        print(loss.item(), optim_utils.learning_rate(optimizer))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = CharModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    run(model, torch.randint(0, 50, (6, 4, 11)), optimizer, nn.CrossEntropyLoss())
