"""The GAN model and the factory that builds it."""
