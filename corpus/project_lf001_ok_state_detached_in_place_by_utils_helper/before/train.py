import torch
import torch.nn.functional as F
from models import RNNModel
from utils import detach_hidden_

torch.manual_seed(0)
model = RNNModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(26, 3, 5)
hidden = model.init_hidden(3)
for i in range(0, 20, 5):
    output, hidden = model(data[i : i + 5], hidden)
    loss = F.mse_loss(output, data[i + 1 : i + 6])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    detach_hidden_(hidden)
    print(i, loss.item())
