import torch


class BaseAgent:
    def __init__(self, clip=1.0):
        self.clip = clip

    def _backprop(self, optimizer, loss):
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.network.parameters(), self.clip)
        optimizer.step()

    def take_optimisation_step(self, optimizer, loss):
        self._backprop(optimizer, loss)
        self.steps = getattr(self, "steps", 0) + 1
