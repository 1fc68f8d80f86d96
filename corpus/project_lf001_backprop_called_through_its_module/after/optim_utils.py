def backprop(loss, optimizer):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def learning_rate(optimizer):
    return optimizer.param_groups[0]["lr"]
