import torch
import torch.nn.functional as F
from src.model import ActorCritic


def local_train(index, global_model, optimizer, num_episodes):
    torch.manual_seed(index)
    local_model = ActorCritic(4, 2)
    for episode in range(num_episodes):
        local_model.load_state_dict(global_model.state_dict())
        states, returns = torch.randn(5, 4), torch.randn(5, 1)
        logits, values = local_model(states)
        advantage = returns - values
        actor_loss = -(F.log_softmax(logits, dim=1)[:, 0:1] * advantage.detach()).mean()
        total_loss = actor_loss + advantage.pow(2).mean()
        optimizer.zero_grad()
        total_loss.backward()
        for local_param, global_param in zip(local_model.parameters(), global_model.parameters()):
            global_param._grad = local_param.grad
        optimizer.step()
        local_model.zero_grad()
        print(index, episode, total_loss.item())
