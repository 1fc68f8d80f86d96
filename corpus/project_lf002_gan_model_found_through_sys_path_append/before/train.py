import os
import sys

import torch

sys.path.append(os.path.join(os.path.dirname(__file__), "model"))
from model_loader import create_model  # noqa: E402

torch.manual_seed(0)
model = create_model("single")
for step in range(3):
    image, identity = torch.randn(2, 4), torch.randint(1, 3, (2,))
    model.forward(image, identity)
    model.optimize_G_parameters()
    model.optimize_D_parameters()
print("finished")
