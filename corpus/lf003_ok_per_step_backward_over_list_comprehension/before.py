import torch, torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for ep in range(3):
    log_probs = [torch.log_softmax(net(torch.randn(3)), -1)[0] for _ in range(5)]
    rewards = [0.5, 1.0, 0.0, 1.0, 0.2]
    opt.zero_grad()
    for t, (lp, r) in enumerate(zip(log_probs, rewards)):
        (-(0.99 ** t) * r * lp).backward()
    opt.step()
    print(ep)
