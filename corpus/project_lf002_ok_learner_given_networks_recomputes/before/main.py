import torch

from learner import DeterministicLearner
from nets import Policy, QNet

OBS, ACT = 5, 3


def main():
    torch.manual_seed(1)
    learner = DeterministicLearner(policy=Policy(OBS, ACT), q=QNet(OBS, ACT), gamma=0.95)
    for update in range(4):
        obs, next_obs = torch.randn(24, OBS), torch.randn(24, OBS)
        act, rew = torch.rand(24, ACT) * 2 - 1, torch.randn(24, 1)
        print(update, *learner.step(obs, act, rew, next_obs))


if __name__ == "__main__":
    main()
