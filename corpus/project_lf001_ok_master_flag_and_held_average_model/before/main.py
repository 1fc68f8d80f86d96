"""The master agent holds the shared model, its running average and the optimizer; its
learner unrolls the model over rollouts of a few steps, the LSTM state carried across them."""

import torch
import torch.nn as nn

from agent import Agent
from learner import Counter, Learner


class MasterAgent(Agent):
    def __init__(self, args):
        super().__init__(args)
        self.model = nn.LSTMCell(4, self.hidden_dim)
        self.avg_model = nn.LSTMCell(4, self.hidden_dim)
        self.avg_model.load_state_dict(self.model.state_dict())
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.train_step = Counter()

    def fit_model(self):
        learner = Learner(self)
        learner.run()


if __name__ == "__main__":
    torch.manual_seed(0)
    args = {"enable_lstm": True, "hidden_dim": 8, "rollout_steps": 3, "steps": 6}
    MasterAgent(args).fit_model()
    print("trained")
