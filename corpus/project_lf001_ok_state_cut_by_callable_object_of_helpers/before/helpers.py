"""Truncation helpers: an object that cuts a state, and a short name for a staticmethod."""


class Truncation:
    def __call__(self, state):
        return tuple(item.detach() for item in state)


class States:
    @staticmethod
    def detached(state):
        return tuple(item.detach() for item in state)


truncate = Truncation()
detached = States.detached
