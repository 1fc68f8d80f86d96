import torch


class GradNormLogger:
    """Logs the gradient norm after each step, then clears the gradients for the next batch."""

    def __init__(self):
        self.norms = []

    def on_batch_end(self, trainer):
        total = torch.norm(torch.stack([p.grad.norm() for p in trainer.model.parameters()]))
        self.norms.append(float(total))
        trainer.optimizer.zero_grad()
