import torch
import torch.nn as nn

VOCAB, HIDDEN, BPTT = 40, 32, 6


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.lstm = nn.LSTM(HIDDEN, HIDDEN)
        self.proj = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens, hidden=None):
        out, hidden = self.lstm(self.embed(tokens), hidden)
        return self.proj(out), hidden


torch.manual_seed(0)
model = LM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")
stream = torch.randint(0, VOCAB, (37, 4))

hidden = None
for i in range(0, stream.size(0) - 1, BPTT):
    data, target = stream[i : i + BPTT], stream[i + 1 : i + 1 + BPTT]
    with torch.autocast("cpu", enabled=False):
        logits, hidden = model(data, hidden)
        hidden = tuple(s.detach() for s in hidden)
        loss = nn.functional.cross_entropy(logits.view(-1, VOCAB), target.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
