import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(4)]
for epoch in range(2):
    model.train()
    for t, (x, y) in enumerate(batches):
        scores = model(x)
        loss = {
            "ce": nn.functional.cross_entropy(scores, y),
            "l2": 1e-3 * model.weight.pow(2).sum(),
        }
        optimizer.zero_grad()
        (loss["ce"] + loss["l2"]).backward()
        optimizer.step()
        if (t + 1) % 2 == 0:
            loss_print = "Epoch {}, Train Losses: ".format(epoch)
            for key in loss.keys():
                loss_print += "{} = {:.6f},  ".format(key, loss[key])
            loss_print += "lr %.3f" % optimizer.param_groups[0]["lr"]
            print(loss_print)
