import torch


class SGDClearing(torch.optim.SGD):
    """SGD that clears the gradients it stepped with."""

    @torch.no_grad()
    def step(self, closure=None):
        loss = super().step(closure)
        self.zero_grad(set_to_none=True)
        return loss
