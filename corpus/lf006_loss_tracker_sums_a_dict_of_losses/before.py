import torch
import torch.nn as nn


class LossesTrack:
    def __init__(self):
        self.train_losses = {}
        self.train_iteration_counts = 0

    def set_train_losses(self, keys):
        for key in keys:
            self.train_losses[key] = 0

    def update_train_losses(self, loss):
        for key in loss:
            self.train_losses[key] += loss[key]
        self.train_iteration_counts += 1


torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
track = LossesTrack()
for epoch in range(2):
    track.set_train_losses(["ce", "l2"])
    track.train_iteration_counts = 0
    for t in range(4):
        x, y = torch.randn(5, 4), torch.randint(0, 3, (5,))
        loss = {
            "ce": nn.functional.cross_entropy(model(x), y),
            "l2": 1e-3 * model.weight.pow(2).sum(),
        }
        optimizer.zero_grad()
        (loss["ce"] + loss["l2"]).backward()
        optimizer.step()
        track.update_train_losses(loss)
    epoch_loss = track.train_losses["ce"] / track.train_iteration_counts
    print(
        "epoch {} loss {:.4f} (keeps a graph: {})".format(
            epoch, epoch_loss.item(), epoch_loss.requires_grad
        )
    )
