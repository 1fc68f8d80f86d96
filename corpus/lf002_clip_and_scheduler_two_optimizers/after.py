import torch
import torch.nn as nn

torch.manual_seed(0)
projector = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8))
predictor = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
proj_opt = torch.optim.SGD(projector.parameters(), lr=0.1, momentum=0.9)
pred_opt = torch.optim.SGD(predictor.parameters(), lr=0.1)
proj_sched = torch.optim.lr_scheduler.StepLR(proj_opt, step_size=2)
pred_sched = torch.optim.lr_scheduler.StepLR(pred_opt, step_size=2)

for step in range(3):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    z = projector(x)
    prediction = predictor(z)
    proj_loss = z.pow(2).mean() + (prediction - y).pow(2).mean()
    pred_loss = (prediction - y).abs().mean()
    proj_opt.zero_grad()
    pred_opt.zero_grad()
    proj_loss.backward(retain_graph=True, inputs=list(projector.parameters()))
    pred_loss.backward(inputs=list(predictor.parameters()))
    torch.nn.utils.clip_grad_norm_(projector.parameters(), 1.0)
    proj_opt.step()
    proj_sched.step()
    torch.nn.utils.clip_grad_norm_(predictor.parameters(), 1.0)
    pred_opt.step()
    pred_sched.step()
