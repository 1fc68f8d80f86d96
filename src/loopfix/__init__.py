"""loopfix: find and fix autograd bugs in PyTorch training loops."""

__version__ = "0.1.0"
