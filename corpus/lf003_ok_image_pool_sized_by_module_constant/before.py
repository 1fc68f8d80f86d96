import itertools
import random

import torch
import torch.nn as nn

POOL_SIZE = 50


class ImagePool:
    """CycleGAN's history of generated images: past fakes, cut from their graphs."""

    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:
            self.num_imgs = 0
            self.images = []

    def query(self, images):
        if self.pool_size == 0:
            return images
        return_images = []
        for image in images.data:
            image = torch.unsqueeze(image, 0)
            if self.num_imgs < self.pool_size:
                self.num_imgs = self.num_imgs + 1
                self.images.append(image)
                return_images.append(image)
            elif random.uniform(0, 1) > 0.5:
                random_id = random.randint(0, self.pool_size - 1)
                tmp = self.images[random_id].clone()
                self.images[random_id] = image
                return_images.append(tmp)
            else:
                return_images.append(image)
        return torch.cat(return_images, 0)


torch.manual_seed(0)
random.seed(0)
G_A = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
G_B = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
D_A = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
D_B = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
G_optimizer = torch.optim.Adam(itertools.chain(G_A.parameters(), G_B.parameters()), lr=2e-4)
D_A_optimizer = torch.optim.Adam(D_A.parameters(), lr=2e-4)
D_B_optimizer = torch.optim.Adam(D_B.parameters(), lr=2e-4)
fake_A_pool = ImagePool(POOL_SIZE)
fake_B_pool = ImagePool(POOL_SIZE)
mse = nn.MSELoss()
l1 = nn.L1Loss()

for step in range(4):
    real_A, real_B = torch.randn(2, 4), torch.randn(2, 4)
    fake_B = G_A(real_A)
    D_B_fake = D_B(fake_B)
    fake_A = G_B(real_B)
    D_A_fake = D_A(fake_A)
    cycle = l1(G_B(fake_B), real_A) + l1(G_A(fake_A), real_B)
    G_loss = mse(D_B_fake, torch.ones_like(D_B_fake))
    G_loss = G_loss + mse(D_A_fake, torch.ones_like(D_A_fake)) + cycle
    G_optimizer.zero_grad()
    G_loss.backward()
    G_optimizer.step()

    # the discriminators see images from the pool: no graph of the generators
    fake_A = fake_A_pool.query(fake_A)
    D_A_real, D_A_fake = D_A(real_A), D_A(fake_A)
    D_A_loss = (mse(D_A_real, torch.ones_like(D_A_real)) + mse(D_A_fake, torch.zeros_like(D_A_fake))) * 0.5
    D_A_optimizer.zero_grad()
    D_A_loss.backward()
    D_A_optimizer.step()

    fake_B = fake_B_pool.query(fake_B)
    D_B_real, D_B_fake = D_B(real_B), D_B(fake_B)
    D_B_loss = (mse(D_B_real, torch.ones_like(D_B_real)) + mse(D_B_fake, torch.zeros_like(D_B_fake))) * 0.5
    D_B_optimizer.zero_grad()
    D_B_loss.backward()
    D_B_optimizer.step()
print("finished")
