"""A learner process: unrolls the shared model for a rollout and updates it."""

import torch


class Counter:
    def __init__(self):
        self.value = 0


class Learner:
    def __init__(self, master):
        self.master = master
        self.model = master.model
        if self.master.enable_lstm:
            self._reset_hidden_episode()

    def _reset_hidden_episode(self):
        zeros = torch.zeros(1, self.master.hidden_dim)
        self.hidden = (zeros, zeros.clone())
        self.avg_hidden = (zeros.clone(), zeros.clone())

    def _reset_hidden_rollout(self):
        # cut the graph of the previous rollout
        self.hidden = (self.hidden[0].detach(), self.hidden[1].detach())
        self.avg_hidden = (self.avg_hidden[0].detach(), self.avg_hidden[1].detach())

    def _forward(self, state):
        if self.master.enable_lstm:
            self.hidden = self.model(state, self.hidden)
            with torch.no_grad():
                self.avg_hidden = self.master.avg_model(state, self.avg_hidden)
            return self.hidden[0], self.avg_hidden[0]
        return self.model(state)[0], None

    def _rollout(self):
        outputs = []
        for _ in range(self.master.rollout_steps):
            output, average = self._forward(torch.randn(1, 4))
            outputs.append(output if average is None else output - average)
        return outputs

    def run(self):
        while self.master.train_step.value < self.master.steps:
            if self.master.enable_lstm:
                self._reset_hidden_rollout()
            outputs = self._rollout()
            loss = sum(output.pow(2).sum() for output in outputs)
            self.master.optimizer.zero_grad()
            loss.backward()
            self.master.optimizer.step()
            self.master.train_step.value += 1
