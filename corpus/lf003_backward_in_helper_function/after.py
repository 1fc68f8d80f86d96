import torch
import torch.nn as nn


def backward(loss, scale=1.0):
    (loss * scale).backward(retain_graph=True)


def optimizer_step(optimizer, params, max_norm=1.0):
    nn.utils.clip_grad_norm_(params, max_norm)
    optimizer.step()
    optimizer.zero_grad()


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32))
classifier = nn.Linear(32, 5)
decoder = nn.Linear(32, 16)
params = [*encoder.parameters(), *classifier.parameters(), *decoder.parameters()]
optimizer = torch.optim.AdamW(params, lr=1e-3)

for step in range(4):
    x, labels = torch.randn(8, 16), torch.randint(0, 5, (8,))
    z = encoder(x)
    main_loss = nn.functional.cross_entropy(classifier(z), labels)
    recon_loss = nn.functional.mse_loss(decoder(z), x)
    backward(main_loss)
    backward(recon_loss, scale=0.1)
    optimizer_step(optimizer, params)
