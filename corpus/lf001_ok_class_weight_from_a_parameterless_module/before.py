import torch
import torch.nn as nn
import torch.nn.functional as F


class ClassWeightModule(nn.Module):
    """PADA's class weights: the softmax of the classifier's outputs averaged over the
    target data, sharpened by a temperature (a module without parameters)."""

    def __init__(self, temperature: float = 0.1):
        super().__init__()
        self.temperature = temperature

    def forward(self, outputs):
        outputs.detach_()
        weight = F.softmax(outputs / self.temperature, dim=1).mean(dim=0)
        return (weight / weight.max()).view(-1)


class AutomaticClassWeight:
    """Recomputes the class weights every `update_steps` iterations."""

    def __init__(self, update_steps, data, classifier, num_classes):
        self.update_steps, self.data, self.classifier = update_steps, data, classifier
        self.class_weight_module = ClassWeightModule()
        self.class_weight = torch.ones(num_classes)
        self.num_steps = 0

    def step(self):
        self.num_steps += 1
        if self.num_steps % self.update_steps == 0:
            with torch.no_grad():
                outputs = self.classifier(self.data)
            self.class_weight = self.class_weight_module(outputs)

    def weight_for_cross_entropy(self):
        return self.class_weight


torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.1)
weights = AutomaticClassWeight(2, torch.randn(32, 8), classifier, num_classes=4)
for step in range(6):
    x, y = torch.randn(8, 8), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(classifier(x), y, weights.weight_for_cross_entropy())
    weights.step()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
