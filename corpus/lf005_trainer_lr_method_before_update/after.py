# A trainer object keeps its optimizer and an exponential schedule; the loop asks it to advance
# the learning rate before each update, as pre-1.1 code did, so every update runs one schedule
# step ahead.
import torch
import torch.nn as nn


class Learner:
    def __init__(self, width=8, lr=0.2):
        self.body = nn.Sequential(nn.Linear(width, 12), nn.ReLU(), nn.Linear(12, 1))
        self.opt = torch.optim.SGD(self.body.parameters(), lr=lr, momentum=0.9)
        self.schedule = torch.optim.lr_scheduler.ExponentialLR(self.opt, gamma=0.7)

    def advance_learning_rate(self):
        self.schedule.step()
        return self.opt.param_groups[0]["lr"]

    def fit_batch(self, x, y):
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self.body(x), y)
        loss.backward()
        self.opt.step()
        return loss.item()


def run(iterations=3):
    torch.manual_seed(0)
    learner = Learner()
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    for it in range(iterations):
        loss = learner.fit_batch(x, y)
        rate = learner.advance_learning_rate()
        print(f"iteration {it}: lr {rate:.4f} loss {loss:.4f}")


if __name__ == "__main__":
    run()
