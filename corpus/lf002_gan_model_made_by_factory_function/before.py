import torch
import torch.nn as nn

torch.manual_seed(0)


class FaceGAN:
    """A GAN model object set up by `initialize()`, as DR-GAN's `Single_DRGAN` is."""

    def initialize(self):
        self.G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.optimizer_G = torch.optim.Adam(self.G.parameters(), lr=1e-3)
        self.optimizer_D = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, image, identity):
        self.image, self.identity = image, identity
        self.synthetic = self.G(image)
        self.scores_fake = self.D(self.synthetic)
        self.scores_real = self.D(image)

    def optimize_G(self):
        self.optimizer_G.zero_grad()
        loss = self.criterion(self.scores_fake, self.identity)
        loss.backward(retain_graph=True)
        self.optimizer_G.step()

    def optimize_D(self):
        self.optimizer_D.zero_grad()
        fake_identity = torch.zeros_like(self.identity)
        loss = self.criterion(self.scores_real, self.identity) + self.criterion(
            self.scores_fake, fake_identity
        )
        loss.backward()  # the fake scores go through G, which optimize_G just stepped
        self.optimizer_D.step()


def create_model(kind):
    model = FaceGAN()
    model.initialize()
    return model


model = create_model("single")
for step in range(3):
    model.forward(torch.randn(2, 4), torch.randint(1, 3, (2,)))
    model.optimize_G()
    model.optimize_D()
