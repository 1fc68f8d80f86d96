import contextlib
import types

import torch
import torch.nn as nn

try:
    from apex import amp
except ImportError:  # apex's interface without mixed precision, where apex is not installed

    @contextlib.contextmanager
    def _scale_loss(loss, optimizers, **kwargs):
        yield loss

    amp = types.SimpleNamespace(
        initialize=lambda models, optimizers, **kwargs: (models, optimizers),
        scale_loss=_scale_loss,
    )

fp16 = True
weight_decay = 1e-4
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
if fp16:
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for step in range(5):
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    loss = nn.functional.cross_entropy(model(x), y)
    l2 = sum(p.pow(2).sum() for p in model.parameters())
    loss = loss + weight_decay * l2
    optimizer.zero_grad()
    if fp16:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
    print(step, loss.item())
