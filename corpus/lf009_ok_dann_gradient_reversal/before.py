# DANN-style adversarial domain adaptation with a gradient reversal layer, separate optimizers
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)
    @staticmethod
    def backward(ctx, g):
        return -ctx.lambd * g, None
def grad_reverse(x, lambd=1.0):
    return GradReverse.apply(x, lambd)
feat_net = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
classifier = nn.Linear(32, 3)
domain_disc = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))
opt_f = torch.optim.SGD(list(feat_net.parameters()) + list(classifier.parameters()), lr=0.01)
opt_d = torch.optim.SGD(domain_disc.parameters(), lr=0.01)
for step in range(3):
    xs, ys = torch.randn(8, 10), torch.randint(0, 3, (8,))
    xt = torch.randn(8, 10)
    opt_f.zero_grad()
    opt_d.zero_grad()
    feat = feat_net(torch.cat([xs, xt]))
    dlabel = torch.cat([torch.zeros(8, 1), torch.ones(8, 1)])
    # the reversed domain gradient is what makes the features domain-invariant
    dom_loss = F.binary_cross_entropy_with_logits(domain_disc(grad_reverse(feat)), dlabel)
    dom_loss.backward(retain_graph=True)
    opt_d.step()
    cls_loss = F.cross_entropy(classifier(feat[:8]), ys)
    cls_loss.backward()
    opt_f.step()
print("ok")
