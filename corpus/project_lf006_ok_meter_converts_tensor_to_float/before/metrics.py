import torch


class AverageMeter:
    """Keeps a running average; a tensor given to it is turned into a number first."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        if torch.is_tensor(val):
            val = val.item()
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count
