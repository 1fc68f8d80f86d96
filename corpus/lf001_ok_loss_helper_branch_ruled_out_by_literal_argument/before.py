"""FlexMatch-style consistency loss: the helper returns one tensor for `name="L2"` and a
(loss, running class distribution) pair for `name="ce"`. The training loop passes "ce", so
the running distribution it carries is always built from detached predictions."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def consistency_loss(logits_s, logits_w, p_model, name="ce", use_da=True):
    logits_w = logits_w.detach()
    if name == "L2":
        return F.mse_loss(logits_s.softmax(-1), logits_w.softmax(-1))
    pseudo_label = torch.softmax(logits_w, dim=-1)
    if use_da:
        if p_model is None:
            p_model = pseudo_label.mean(dim=0)
        else:
            p_model = p_model * 0.999 + pseudo_label.mean(dim=0) * 0.001
        pseudo_label = pseudo_label / p_model
        pseudo_label = pseudo_label / pseudo_label.sum(dim=-1, keepdim=True)
    loss = F.cross_entropy(logits_s, pseudo_label)
    return loss, p_model


torch.manual_seed(0)
model = nn.Linear(8, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
p_model = None
for step in range(6):
    weak, strong = torch.randn(16, 8), torch.randn(16, 8)
    unsup_loss, p_model = consistency_loss(model(strong), model(weak), p_model, "ce")
    optimizer.zero_grad()
    unsup_loss.backward()
    optimizer.step()

assert not p_model.requires_grad
print("trained 6 steps; the running distribution holds no graph")
