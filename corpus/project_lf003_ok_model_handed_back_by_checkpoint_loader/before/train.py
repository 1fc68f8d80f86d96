import importlib

import torch

# modules named at run time (loopfix does not follow them), as a configuration picks them
checkpoint = importlib.import_module("lib.checkpoint")
nets = importlib.import_module("lib.nets")


def train(model, optimizer, batches, start_epoch):
    for epoch in range(start_epoch, 3):
        for x, y in batches:
            loss = model.compute_loss(model(x), y)
            optimizer.zero_grad()
            loss["total"].backward()
            optimizer.step()
            print(epoch, round(loss["total"].item(), 4))


def main():
    torch.manual_seed(0)
    model = nets.get_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
    model, optimizer, scheduler, epoch = checkpoint.load(model, optimizer, scheduler, False, "")
    batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
    train(model, optimizer, batches, epoch)


if __name__ == "__main__":
    main()
