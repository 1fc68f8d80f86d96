import torch
import torch.nn as nn


def detach_state(state):
    """Cut a recurrent state loose from the graph of the batch that produced it."""
    if isinstance(state, dict):
        return {key: detach_state(value) for key, value in state.items()}
    if isinstance(state, tuple) and hasattr(state, '_fields'):  # a namedtuple
        return type(state)(*(detach_state(value) for value in state))
    if isinstance(state, (list, tuple)):
        return type(state)(detach_state(value) for value in state)
    return state.detach() if hasattr(state, 'detach') else state  # None, arrays, numbers


class StackedTrainer:
    def __init__(self, n_in=4, hidden=16, n_layers=2, batch=3):
        self.cells = nn.ModuleList([nn.LSTMCell(n_in if i == 0 else hidden, hidden) for i in range(n_layers)])
        self.out = nn.Linear(hidden, n_in)
        self.optimizer = torch.optim.Adam([*self.cells.parameters(), *self.out.parameters()], lr=1e-3)
        self.states = [(torch.zeros(batch, hidden), torch.zeros(batch, hidden)) for _ in range(n_layers)]

    def step(self, chunk, target):
        preds = []
        for x in chunk:
            for i, cell in enumerate(self.cells):
                h, c = cell(x, self.states[i])
                self.states[i] = (h, c)
                x = h
            preds.append(self.out(x))
        loss = nn.functional.mse_loss(torch.stack(preds), target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
trainer = StackedTrainer()
seq = torch.randn(31, 3, 4)
for t in range(0, 30, 5):
    trainer.step(seq[t : t + 5], seq[t + 1 : t + 6])
    trainer.states = detach_state(trainer.states)
