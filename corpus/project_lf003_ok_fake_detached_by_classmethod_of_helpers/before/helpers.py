"""Tensor helpers grouped in a namespace class."""


class Ops:
    @classmethod
    def frozen(cls, tensor):
        """The tensor without its graph: what the discriminator's step may see of a fake."""
        return tensor.detach()
