import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken=5, nhid=8):
        super().__init__()
        self.rnn = nn.LSTM(ntoken, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, self.nhid), torch.zeros(1, bsz, self.nhid))

    def forward(self, x, hidden):
        output, hidden = self.rnn(x, hidden)
        return self.decoder(output), hidden
