import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.policy = nn.Linear(16, 2)
        self.value = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return F.log_softmax(self.policy(h), dim=-1), self.value(h)


def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad


def train(shared_model, optimizer, steps):
    model = ActorCritic()
    for step in range(steps):
        model.load_state_dict(shared_model.state_dict())
        states = torch.randn(6, 4)
        log_probs, values = model(states)
        returns = torch.randn(6, 1)
        advantage = returns - values
        policy_loss = -(log_probs[:, 0:1] * advantage.detach()).mean()
        value_loss = advantage.pow(2).mean()
        optimizer.zero_grad()
        (policy_loss + 0.5 * value_loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 40.0)
        ensure_shared_grads(model, shared_model)
        optimizer.step()
        model.zero_grad()
        print(step, value_loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    shared = ActorCritic()
    train(shared, torch.optim.Adam(shared.parameters(), lr=1e-3), 5)
