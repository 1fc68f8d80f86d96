import torch


class AgentBase:
    """What every agent shares: one optimizer update with optional clipping."""

    def optimise(self, optimizer, network, loss, max_norm=None):
        optimizer.zero_grad()
        loss.backward()
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(network.parameters(), max_norm)
        optimizer.step()
