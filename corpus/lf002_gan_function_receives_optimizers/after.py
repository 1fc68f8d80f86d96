import torch
from torch import nn


def train_epoch(gen, disc, gen_opt, disc_opt, loader, device="cpu"):
    for noise, images in loader:
        noise, images = noise.to(device), images.to(device)
        fakes = gen(noise)
        real_logit = disc(images).mean()
        fake_logit = disc(fakes).mean()
        disc_loss = torch.nn.functional.softplus(fake_logit - real_logit)
        disc_opt.zero_grad()
        gen_opt.zero_grad()
        disc_loss.backward(retain_graph=True, inputs=list(disc.parameters()))
        gen_loss = torch.nn.functional.softplus(-fake_logit)
        gen_loss.backward(inputs=list(gen.parameters()))
        disc_opt.step()
        gen_opt.step()


def main():
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 6))
    disc = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 1))
    gen_opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
    disc_opt = torch.optim.Adam(disc.parameters(), lr=1e-3)
    loader = [(torch.randn(10, 3), torch.randn(10, 6)) for _ in range(4)]
    train_epoch(gen, disc, gen_opt, disc_opt, loader)


if __name__ == "__main__":
    main()
