"""Helpers for recurrent states, as class-level methods of one namespace class."""


class StateUtils:
    @classmethod
    def repackage(cls, state):
        """A new state without the graph of the batch that produced it."""
        if isinstance(state, tuple):
            return tuple(cls.repackage(item) for item in state)
        return state.detach()
