import random

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hid)

    def forward(self, src):
        _, hidden = self.rnn(self.embedding(src))
        return hidden


class Decoder(nn.Module):
    def __init__(self, vocab, emb, hid):
        super().__init__()
        self.output_dim = vocab
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hid)
        self.fc_out = nn.Linear(hid, vocab)

    def forward(self, token, hidden):
        output, hidden = self.rnn(self.embedding(token.unsqueeze(0)), hidden)
        return self.fc_out(output.squeeze(0)), hidden


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src, trg, teacher_forcing_ratio=0.5):
        trg_len, batch_size = trg.shape
        outputs = torch.zeros(trg_len, batch_size, self.decoder.output_dim)
        hidden = self.encoder(src)
        token = trg[0, :]
        for t in range(1, trg_len):
            output, hidden = self.decoder(token, hidden)
            outputs[t] = output
            top1 = output.argmax(1)
            token = trg[t] if random.random() < teacher_forcing_ratio else top1
        return outputs


random.seed(0)
torch.manual_seed(0)
model = Seq2Seq(Encoder(12, 6, 8), Decoder(12, 6, 8))
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()
for step in range(3):
    src, trg = torch.randint(0, 12, (5, 3)), torch.randint(0, 12, (4, 3))
    output = model(src, trg)
    loss = criterion(output[1:].reshape(-1, 12), trg[1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
