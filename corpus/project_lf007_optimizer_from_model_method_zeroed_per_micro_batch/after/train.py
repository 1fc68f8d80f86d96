import torch

from model import TinyLM
from trainer import Trainer

torch.manual_seed(0)
batches = [
    [(torch.randint(0, 32, (4, 8)), torch.randint(0, 32, (4, 8))) for _ in range(4)]
    for _ in range(3)
]
Trainer(TinyLM(), accumulation_steps=4).run(batches)
