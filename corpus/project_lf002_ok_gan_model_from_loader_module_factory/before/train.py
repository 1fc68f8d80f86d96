import torch

from models.loader import create_model

torch.manual_seed(0)
model = create_model("single")
for step in range(3):
    image, identity = torch.randn(2, 4), torch.randint(1, 3, (2,))
    model.forward(image, identity)
    model.optimize_D_parameters()
    model.forward(image, identity)
    model.optimize_G_parameters()
print("finished")
