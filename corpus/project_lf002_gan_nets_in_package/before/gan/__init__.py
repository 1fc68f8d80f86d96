from .nets import Critic, Generator

__all__ = ["Critic", "Generator"]
