import torch
import torch.nn as nn


def detach_state(state):
    """Cut a recurrent state loose from the graph of the batch that produced it."""
    if isinstance(state, dict):
        return {key: detach_state(value) for key, value in state.items()}
    if isinstance(state, tuple) and hasattr(state, '_fields'):  # a namedtuple
        return type(state)(*(detach_state(value) for value in state))
    if isinstance(state, (list, tuple)):
        return type(state)(detach_state(value) for value in state)
    return state.detach() if hasattr(state, 'detach') else state  # None, arrays, numbers


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid):
        super().__init__()
        self.rnn_type, self.nhid = rnn_type, nhid
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.encoder(tokens), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(1, bsz, self.nhid), weight.new_zeros(1, bsz, self.nhid))
        return weight.new_zeros(1, bsz, self.nhid)


torch.manual_seed(0)
corpus = torch.randint(0, 40, (31, 3))
model = RNNModel("LSTM", 40, 12, 16)
criterion = nn.NLLLoss()
lr = 5.0
hidden = model.init_hidden(3)
for i in range(0, 30, 6):
    data, targets = corpus[i : i + 6], corpus[i + 1 : i + 7]
    model.zero_grad()
    output, hidden = model(data, hidden)
    hidden = detach_state(hidden)
    loss = criterion(torch.log_softmax(output, -1).view(-1, 40), targets.reshape(-1))
    loss.backward()
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
