import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
gradient_accumulation_steps = 4
for iter_num in range(6):
    for micro_step in range(gradient_accumulation_steps):
        x, y = torch.randn(2, 8), torch.randn(2, 1)
        loss = nn.functional.mse_loss(model(x), y) / gradient_accumulation_steps
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
