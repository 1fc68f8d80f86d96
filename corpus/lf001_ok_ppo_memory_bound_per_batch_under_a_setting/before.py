import torch
import torch.nn as nn


class ACModel(nn.Module):
    def __init__(self, use_memory=True):
        super().__init__()
        self.use_memory = use_memory
        self.encoder = nn.Linear(4, 8)
        self.cell = nn.LSTMCell(8, 8)
        self.actor, self.critic = nn.Linear(8, 2), nn.Linear(8, 1)

    @property
    def recurrent(self):
        return self.use_memory

    def forward(self, obs, memory=None):
        x = torch.relu(self.encoder(obs))
        if self.recurrent:
            h, c = self.cell(x, (memory[:, :8], memory[:, 8:]))
            x, memory = h, torch.cat([h, c], dim=1)
        return self.actor(x).log_softmax(-1), self.critic(x).squeeze(-1), memory


class PPO:
    """torch-ac's PPO update: each batch starts from the memories stored while collecting
    (without graph), and runs `recurrence` steps of the model through them."""

    def __init__(self, acmodel, recurrence=4):
        self.acmodel, self.recurrence = acmodel, recurrence
        self.optimizer = torch.optim.Adam(acmodel.parameters(), lr=1e-3)

    def update(self, obs, memories, advantages, epochs=2, batches=3):
        for _ in range(epochs):
            for b in range(batches):
                inds = torch.arange(b * 4, b * 4 + 4)
                batch_loss = 0
                if self.acmodel.recurrent:
                    memory = memories[inds]
                for i in range(self.recurrence):
                    if self.acmodel.recurrent:
                        log_probs, value, memory = self.acmodel(obs[inds + i], memory)
                    else:
                        log_probs, value, _ = self.acmodel(obs[inds + i])
                    batch_loss = batch_loss - (log_probs[:, 0] * advantages[inds + i]).mean()
                    batch_loss = batch_loss + value.pow(2).mean()
                    if self.acmodel.recurrent and i < self.recurrence - 1:
                        memories[inds + i + 1] = memory.detach()
                self.optimizer.zero_grad()
                batch_loss.backward()
                torch.nn.utils.clip_grad_norm_(self.acmodel.parameters(), 0.5)
                self.optimizer.step()


torch.manual_seed(0)
for use_memory in (True, False):
    model = ACModel(use_memory)
    with torch.no_grad():
        memories = torch.zeros(16, 16)
    PPO(model).update(torch.randn(16, 4), memories, torch.randn(16))
print("updated")
