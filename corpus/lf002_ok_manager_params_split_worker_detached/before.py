import torch
import torch.nn as nn
import torch.nn.functional as F


class ManagerWorker(nn.Module):
    """A LeakGAN-style generator: a manager proposes goals, a worker acts on them."""

    def __init__(self, vocabulary=7, width=8, goal=4):
        super().__init__()
        self.manager = nn.LSTM(5, width)
        self.to_goal = nn.Linear(width, goal)
        self.goal_init = nn.Parameter(torch.randn(16, goal))
        self.embed = nn.Embedding(vocabulary, 6)
        self.worker = nn.LSTM(6, width)
        self.to_logits = nn.Linear(width, vocabulary * goal)
        self.vocabulary, self.goal = vocabulary, goal

    def split_params(self):
        manager = list(self.manager.parameters()) + list(self.to_goal.parameters())
        manager = manager + [self.goal_init]
        worker = list(self.embed.parameters()) + list(self.worker.parameters())
        worker = worker + list(self.to_logits.parameters())
        return manager, worker

    def losses(self, target):
        batch, steps = target.shape
        states, _ = self.manager(torch.randn(steps, batch, 5))
        goals = F.normalize(self.to_goal(states), dim=-1)
        real_goal = goals.detach().cumsum(0) + self.goal_init[:batch].detach()
        words, _ = self.worker(self.embed(target.t()))
        words = self.to_logits(words).view(steps, batch, self.vocabulary, self.goal)
        logits = torch.matmul(words, real_goal.unsqueeze(-1)).squeeze(-1)
        worker_loss = F.cross_entropy(logits.reshape(-1, self.vocabulary), target.t().reshape(-1))
        manager_loss = -(goals[1:] * goals[:-1]).sum(-1).mean()
        return manager_loss, worker_loss


class Instructor:
    def __init__(self):
        self.generator = ManagerWorker()
        manager_params, worker_params = self.generator.split_params()
        self.optimizers = [
            torch.optim.Adam(manager_params, lr=1e-2),
            torch.optim.Adam(worker_params, lr=1e-2),
        ]

    @staticmethod
    def optimize_multi(optimizers, losses):
        for i, (optimizer, loss) in enumerate(zip(optimizers, losses)):
            optimizer.zero_grad()
            loss.backward(retain_graph=i < len(optimizers) - 1)
            optimizer.step()

    def pretrain(self, steps):
        for step in range(steps):
            target = torch.randint(0, 7, (4, 6))
            manager_loss, worker_loss = self.generator.losses(target)
            self.optimize_multi(self.optimizers, [manager_loss, worker_loss])
            print(step, manager_loss.item(), worker_loss.item())


torch.manual_seed(0)
Instructor().pretrain(3)
