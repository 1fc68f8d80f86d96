def optimize(optimizer, loss):
    """One optimizer update: clear, backpropagate, step."""
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def soft_update(target, source, tau):
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(tau * s.data + (1 - tau) * t.data)
