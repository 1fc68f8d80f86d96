import torch
import torch.multiprocessing as _mp
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.actor = nn.Linear(16, 2)
        self.critic = nn.Linear(16, 1)

    def forward(self, x):
        x = F.relu(self.body(x))
        return self.actor(x), self.critic(x)


def local_train(index, global_model, optimizer, num_episodes):
    torch.manual_seed(index)
    local_model = ActorCritic()
    for episode in range(num_episodes):
        local_model.load_state_dict(global_model.state_dict())
        states, returns = torch.randn(5, 4), torch.randn(5, 1)
        logits, values = local_model(states)
        advantage = returns - values
        actor_loss = -(F.log_softmax(logits, dim=1)[:, 0:1] * advantage.detach()).mean()
        total_loss = actor_loss + advantage.pow(2).mean()
        optimizer.zero_grad()
        local_model.zero_grad()
        total_loss.backward()
        for local_param, global_param in zip(local_model.parameters(), global_model.parameters()):
            global_param._grad = local_param.grad
        optimizer.step()
        print(index, episode, total_loss.item())


def train(num_processes):
    torch.manual_seed(123)
    mp = _mp.get_context("spawn")
    global_model = ActorCritic()
    global_model.share_memory()
    optimizer = torch.optim.SGD(global_model.parameters(), lr=1e-3)
    processes = []
    for index in range(num_processes):
        process = mp.Process(target=local_train, args=(index, global_model, optimizer, 3))
        process.start()
        processes.append(process)
    for process in processes:
        process.join()


if __name__ == "__main__":
    train(2)
