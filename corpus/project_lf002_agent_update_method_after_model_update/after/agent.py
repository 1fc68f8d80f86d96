import torch
import torch.nn.functional as F

from helpers import update_params
from networks import make


class LatentAgent:
    def __init__(self, obs=6, latent=4, act=2, lr=3e-4, clip=10.0):
        self.model = make("wide", obs, latent)
        self.policy = make("mlp", latent, act)
        self.q1 = make("mlp", latent + act, 1)
        self.q2 = make("mlp", latent + act, 1)
        self.model_optim = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.q1_optim = torch.optim.Adam(self.q1.parameters(), lr=lr)
        self.q2_optim = torch.optim.Adam(self.q2.parameters(), lr=lr)
        self.clip = clip

    def learn(self, obs, act, target):
        self.learn_model(obs, target)
        return self.learn_policy(obs, act, target)

    def learn_model(self, obs, target):
        model_loss = F.mse_loss(self.model(obs).sum(1, keepdim=True), target)
        update_params(self.model_optim, self.model, model_loss, self.clip)

    def learn_policy(self, obs, act, target):
        with torch.no_grad():
            latent = self.model(obs)
        q1_loss = F.mse_loss(self.q1(torch.cat([latent, act], 1)), target)
        q2_loss = F.mse_loss(self.q2(torch.cat([latent, act], 1)), target)
        proposal = torch.tanh(self.policy(latent))
        sa = torch.cat([latent, proposal], 1)
        policy_loss = -torch.min(self.q1(sa), self.q2(sa)).mean()

        update_params(self.policy_optim, self.policy, policy_loss, self.clip)
        update_params(self.q1_optim, self.q1, q1_loss, self.clip)
        update_params(self.q2_optim, self.q2, q2_loss, self.clip)
        return q1_loss.item(), policy_loss.item()
