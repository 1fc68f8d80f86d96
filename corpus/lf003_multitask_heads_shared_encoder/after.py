import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
head_a = nn.Linear(16, 3)
head_b = nn.Linear(16, 1)
encoder_opt = torch.optim.SGD(encoder.parameters(), lr=0.05)
head_a_opt = torch.optim.SGD(head_a.parameters(), lr=0.05)
head_b_opt = torch.optim.SGD(head_b.parameters(), lr=0.05)

for batch in range(3):
    x = torch.randn(12, 10)
    label_a, target_b = torch.randint(0, 3, (12,)), torch.randn(12, 1)
    shared = encoder(x)
    encoder_opt.zero_grad()

    head_a_opt.zero_grad()
    loss_a = nn.functional.cross_entropy(head_a(shared), label_a)
    loss_a.backward(retain_graph=True)
    head_a_opt.step()

    head_b_opt.zero_grad()
    loss_b = nn.functional.mse_loss(head_b(shared), target_b)
    loss_b.backward()
    head_b_opt.step()

    encoder_opt.step()
