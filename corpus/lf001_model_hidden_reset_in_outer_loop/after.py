import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab, dim, tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim)
        self.tag = nn.Linear(dim, tags)
        self.hidden = None

    def init_hidden(self, batch):
        return (torch.zeros(1, batch, self.lstm.hidden_size), torch.zeros(1, batch, self.lstm.hidden_size))

    def forward(self, words):
        out, self.hidden = self.lstm(self.embed(words), self.hidden)
        return self.tag(out)


torch.manual_seed(0)
model = Tagger(30, 8, 5)
loss_function = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
sentences = torch.randint(0, 30, (4, 6, 2))
labels = torch.randint(0, 5, (4, 6, 2))

for epoch in range(2):
    model.hidden = model.init_hidden(2)
    for words, tags in zip(sentences, labels):
        model.zero_grad()
        scores = model(words)
        model.hidden = tuple(s.detach() for s in model.hidden)
        loss = loss_function(scores.view(-1, 5), tags.view(-1))
        loss.backward()
        optimizer.step()
