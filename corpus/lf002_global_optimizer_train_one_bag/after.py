import torch
import torch.nn as nn

torch.manual_seed(0)
model0 = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
model1 = nn.Sequential(nn.Linear(16, 1))
instance_head = nn.Linear(16, 1)
optimizer0 = torch.optim.SGD([*model0.parameters(), *instance_head.parameters()], lr=0.01)
optimizer1 = torch.optim.SGD([*model0.parameters(), *model1.parameters()], lr=0.01)
criterion = nn.BCEWithLogitsLoss()


def train_one_bag(bag, bag_label):
    feats = model0(bag)
    instance_logits = instance_head(feats).squeeze(-1)
    pseudo = bag_label.expand_as(instance_logits)
    instance_loss = criterion(instance_logits, pseudo)
    optimizer0.zero_grad()
    instance_loss.backward(retain_graph=True)
    optimizer0.step()

    feats = model0(bag)
    bag_logit = model1(feats.max(dim=0).values)
    bag_loss = criterion(bag_logit, bag_label)
    optimizer1.zero_grad()
    bag_loss.backward()
    optimizer1.step()
    return instance_loss.item() + bag_loss.item()


for epoch in range(2):
    for i in range(3):
        bag = torch.randn(torch.randint(4, 9, ()).item(), 20)
        label = torch.randint(0, 2, (1,)).float()
        train_one_bag(bag, label)
