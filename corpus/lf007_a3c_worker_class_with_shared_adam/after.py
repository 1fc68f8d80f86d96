import threading

import torch
import torch.nn as nn


class SharedAdam(torch.optim.Adam):
    """Adam whose state lives in shared memory, for workers in other processes."""

    def __init__(self, params, lr=1e-3):
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.tensor(0.0)
                state["exp_avg"] = torch.zeros_like(p.data).share_memory_()
                state["exp_avg_sq"] = torch.zeros_like(p.data).share_memory_()


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.value = nn.Linear(16, 1)

    def forward(self, x):
        return self.value(torch.relu(self.body(x)))


class Agent(threading.Thread):
    def __init__(self, global_actor_critic, optimizer, steps):
        super().__init__()
        self.local_actor_critic = ActorCritic()
        self.global_actor_critic = global_actor_critic
        self.optimizer = optimizer
        self.steps = steps

    def run(self):
        for step in range(self.steps):
            self.local_actor_critic.load_state_dict(self.global_actor_critic.state_dict())
            states, returns = torch.randn(6, 4), torch.randn(6, 1)
            loss = (returns - self.local_actor_critic(states)).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            for local_param, global_param in zip(
                self.local_actor_critic.parameters(), self.global_actor_critic.parameters()
            ):
                global_param._grad = local_param.grad
            self.optimizer.step()
            self.local_actor_critic.zero_grad()
            print(step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    global_actor_critic = ActorCritic()
    optimizer = SharedAdam(global_actor_critic.parameters(), lr=1e-3)
    workers = [Agent(global_actor_critic, optimizer, 5) for _ in range(1)]
    [w.start() for w in workers]
    [w.join() for w in workers]
