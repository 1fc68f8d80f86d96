import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
logit_distance_cost = -1.0  # negative: the model has one head
for step in range(4):
    output = model(torch.randn(5, 4))
    if isinstance(output, Variable):  # one head: a tensor (`Variable` is `Tensor`)
        assert logit_distance_cost < 0
        logit1 = output
    else:
        logit1, logit2 = output
    if logit_distance_cost >= 0:
        class_logit, cons_logit = logit1, logit2
    else:
        class_logit, cons_logit = logit1, logit1
    loss = class_logit.pow(2).mean() + cons_logit.abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
