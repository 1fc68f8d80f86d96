import torch
import torch.nn as nn

torch.manual_seed(0)
decoder = nn.Linear(3, 5)
critic = nn.Linear(5, 1)
opt_dec = torch.optim.Adam(decoder.parameters())
opt_crit = torch.optim.Adam(critic.parameters())


def balance(loss):
    grad = torch.autograd.grad(loss, decoder.weight, retain_graph=True)[0]
    return (1.0 / (grad.norm() + 1e-4)).detach()


for it in range(3):
    out = decoder(torch.randn(6, 3))
    score = critic(out)
    adv = -score.mean()
    loss_dec = balance(adv) * adv
    loss_crit = torch.relu(1.0 - score).mean()
    opt_dec.zero_grad()
    loss_dec.backward(retain_graph=True)
    opt_crit.zero_grad()
    loss_crit.backward(inputs=[p for group in opt_crit.param_groups for p in group["params"]])
    opt_dec.step()
    opt_crit.step()
