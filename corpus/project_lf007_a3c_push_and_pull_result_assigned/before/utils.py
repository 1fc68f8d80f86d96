import torch


def push_and_pull(opt, lnet, gnet, x, target):
    loss = (lnet(x) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    for lp, gp in zip(lnet.parameters(), gnet.parameters()):
        gp._grad = lp.grad
    opt.step()
    lnet.load_state_dict(gnet.state_dict())
    return loss.item()
