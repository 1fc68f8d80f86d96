import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.GRU(5, 8, batch_first=True)
decoder = nn.Linear(8, 5)
encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
criterion = nn.MSELoss()


def train(input_tensor, target_tensor):
    """The PyTorch seq2seq tutorial's shape: one loss, an optimizer per network."""
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    outputs, hidden = encoder(input_tensor)
    loss = criterion(decoder(outputs), target_tensor)
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item()


for _ in range(4):
    print(train(torch.randn(2, 6, 5), torch.randn(2, 6, 5)))
