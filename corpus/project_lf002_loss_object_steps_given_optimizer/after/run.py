import torch

from criteria import AdversarialCodeLoss
from loop import fit
from nets import AutoEncoder

if __name__ == "__main__":
    torch.manual_seed(5)
    net = AutoEncoder()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    batches = [torch.randn(20, 12) for _ in range(3)]
    fit(net, opt, AdversarialCodeLoss(), batches, epochs=2)
