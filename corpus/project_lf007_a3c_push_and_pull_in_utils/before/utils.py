"""Helpers shared by the A3C workers (the layout of MorvanZhou's pytorch-A3C)."""


def push_and_pull(opt, lnet, gnet, states, returns):
    """Push the local gradients to the global network, step it, pull its weights back."""
    loss = lnet.loss_func(states, returns)
    opt.zero_grad()
    loss.backward()
    for lp, gp in zip(lnet.parameters(), gnet.parameters()):
        gp._grad = lp.grad
    opt.step()
    lnet.load_state_dict(gnet.state_dict())
