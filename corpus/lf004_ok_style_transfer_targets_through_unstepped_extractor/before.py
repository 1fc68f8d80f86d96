import torch
import torch.nn as nn
import torch.nn.functional as F


def gram_matrix(x):
    b, c, h, w = x.shape
    features = x.view(b, c, h * w)
    return features @ features.transpose(1, 2) / (c * h * w)


class FeatureExtractor(nn.Module):
    """A pretrained network's first blocks (VGG's `features`), used as a fixed loss network."""

    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())

    def forward(self, x):
        relu1 = self.block1(x)
        relu2 = self.block2(relu1)
        return [relu1, relu2]


torch.manual_seed(0)
vgg = FeatureExtractor().eval()  # its weights still require grad: no optimizer steps them
content = torch.rand(1, 3, 16, 16)
style = torch.rand(1, 3, 16, 16)
# the targets are computed once, without detach: they keep the graph through vgg's weights,
# which every step's backward goes through again, so that graph must be kept
style_grams = [gram_matrix(f) for f in vgg(style)]
content_target = vgg(content)[1]
image = content.clone().requires_grad_(True)
optimizer = torch.optim.Adam([image], lr=0.05)
style_weight = 1e3
for step in range(5):
    optimizer.zero_grad()
    features = vgg(image)
    content_loss = F.mse_loss(features[1], content_target)
    style_loss = 0
    for feature, target in zip(features, style_grams):
        style_loss = style_loss + F.mse_loss(gram_matrix(feature), target)
    loss = content_loss + style_weight * style_loss
    loss.backward(retain_graph=True)
    optimizer.step()
    print(step, loss.item())
