import torch
import torch.nn as nn

# which variant of the training loop this script runs, chosen by editing the list index
UPDATE = ["truncated", "whole_sequence"][0]
SEQ_LEN = 10


class WordLM(nn.Module):
    def __init__(self, vocab=50, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        output, state = self.lstm(self.embed(tokens), state)
        return self.out(output), state


def train(model, data, optimizer):
    criterion = nn.CrossEntropyLoss()
    state = None
    for start in range(0, data.size(1) - SEQ_LEN, SEQ_LEN):
        inputs = data[:, start : start + SEQ_LEN]
        targets = data[:, start + 1 : start + SEQ_LEN + 1]
        logits, state = model(inputs, state)
        loss = criterion(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if UPDATE == "truncated":
            state = tuple(s.detach() for s in state)
    return loss.item()


torch.manual_seed(0)
model = WordLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.randint(0, 50, (4, 101))
print(f"loss {train(model, data, optimizer):.3f}")
