import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, accumulation_steps, lr=1e-3):
        self.model = model
        self.accumulation_steps = accumulation_steps
        self.optimizer = model.configure_optimizers(lr, weight_decay=0.1)

    def run(self, batches):
        model = self.model
        for step in range(len(batches)):
            for micro_step in range(self.accumulation_steps):
                self.optimizer.zero_grad(set_to_none=True)
                tokens, targets = batches[step][micro_step]
                logits = model(tokens)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
                (loss / self.accumulation_steps).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            self.optimizer.step()
