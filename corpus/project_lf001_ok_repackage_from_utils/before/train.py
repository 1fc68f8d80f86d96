import torch
from torch import nn

from models import CharLM
from utils import repackage_hidden

torch.manual_seed(0)
vocab, bptt = 24, 10
text = torch.randint(0, vocab, (160, 3))
model = CharLM(vocab, width=12).to("cpu")
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
state = model.begin_state(3)
for start in range(0, 120, bptt):
    chars, target = text[start : start + bptt], text[start + 1 : start + 1 + bptt]
    state = repackage_hidden(state)
    logits, state = model(chars, state)
    loss = nn.functional.cross_entropy(logits.view(-1, vocab), target.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
