import torch
import torch.nn as nn

from utils import train_step


class LanguageModel(nn.Module):
    def __init__(self, vocab=50, hidden_size=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self.decoder = nn.Linear(hidden_size, vocab)

    def forward(self, tokens, hidden):
        output, hidden = self.lstm(self.embed(tokens), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, batch_size):
        weight = next(self.parameters())
        return (weight.new_zeros(1, batch_size, 32), weight.new_zeros(1, batch_size, 32))


def main():
    torch.manual_seed(0)
    model = LanguageModel()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = torch.randint(0, 50, (8, 4, 11))
    hidden = model.init_hidden(4)
    for epoch in range(2):
        for batch in batches:
            inputs, targets = batch[:, :-1], batch[:, 1:]
            loss, hidden = train_step(model, criterion, optimizer, inputs, targets, hidden)
            print(epoch, loss)


if __name__ == "__main__":
    main()
