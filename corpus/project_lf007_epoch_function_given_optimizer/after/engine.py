import torch


def fit_epoch(net, batches, opt, loss_fn):
    """One pass over `batches`; returns the mean loss."""
    net.train()
    seen, total = 0, 0.0
    for features, labels in batches:
        loss = loss_fn(net(features), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * labels.size(0)
        seen += labels.size(0)
    return total / seen


@torch.no_grad()
def accuracy(net, batches):
    hits = sum((net(x).argmax(1) == y).sum().item() for x, y in batches)
    return hits / sum(y.size(0) for _, y in batches)
