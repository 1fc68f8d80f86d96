def fit(net, opt, criterion, batches, epochs=1):
    for epoch in range(epochs):
        for x in batches:
            x_hat, code = net(x)
            ae, critic = criterion(x, x_hat, code, net, opt)
            print(epoch, round(ae, 4), round(critic, 4))
