import torch
import torch.nn.functional as F

from nets import CodeCritic


class AdversarialCodeLoss:
    """Reconstruction plus a critic that pushes codes towards a unit Gaussian; the critic
    has its own optimizer, the autoencoder's is passed in."""

    def __init__(self, code=3, weight=0.1):
        self.weight = weight
        self.critic = CodeCritic(code)
        self.critic_opt = torch.optim.SGD(self.critic.parameters(), lr=0.01)

    def __call__(self, x, x_hat, code, net, opt):
        fooled = self.critic(code)
        ae_loss = F.mse_loss(x_hat, x) - self.weight * fooled.mean()
        opt.zero_grad()
        ae_loss.backward(retain_graph=True)
        opt.step()

        prior = torch.randn_like(code)
        critic_loss = self.critic(code.detach()).mean() - self.critic(prior).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        return ae_loss.item(), critic_loss.item()
