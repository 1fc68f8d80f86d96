import torch


def backprop(loss, optimizer, params=None, clip=1.0):
    optimizer.zero_grad()
    loss.backward()
    if params is not None:
        torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()


def train_step(model, criterion, optimizer, x, y, hidden):
    out, hidden = model(x, hidden)
    loss = criterion(out.reshape(-1, out.size(-1)), y.reshape(-1))
    backprop(loss, optimizer, params=model.parameters())
    return loss.item(), tuple(h.detach() for h in hidden)
