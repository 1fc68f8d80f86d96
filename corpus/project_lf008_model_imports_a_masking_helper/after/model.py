import torch
import torch.nn as nn

from utils import mask_probs


class Pointer(nn.Module):
    def __init__(self, d=6, n=5):
        super().__init__()
        self.fc = nn.Linear(d, n)
        self.val = nn.Linear(n, 1)

    def forward(self, x, mask):
        probs = torch.softmax(self.fc(x), dim=-1)
        probs = probs.clone()
        probs = mask_probs(probs, mask)
        return self.val(probs)
