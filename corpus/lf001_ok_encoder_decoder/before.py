import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(20, 8)
        self.gru = nn.GRU(8, 16)

    def forward(self, tokens):
        _, hidden = self.gru(self.embedding(tokens))
        return hidden


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(20, 8)
        self.gru = nn.GRU(8, 16)
        self.out = nn.Linear(16, 20)

    def forward(self, token, hidden):
        output, hidden = self.gru(self.embedding(token).unsqueeze(0), hidden)
        return self.out(output[0]), hidden


torch.manual_seed(0)
encoder, decoder = Encoder(), Decoder()
encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
for batch in range(3):
    source, target = torch.randint(0, 20, (5, 2)), torch.randint(0, 20, (4, 2))
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    decoder_hidden = encoder(source)
    decoder_input = torch.zeros(2, dtype=torch.long)
    loss = 0
    for t in range(target.size(0)):
        logits, decoder_hidden = decoder(decoder_input, decoder_hidden)
        loss = loss + criterion(logits, target[t])
        decoder_input = target[t]
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
