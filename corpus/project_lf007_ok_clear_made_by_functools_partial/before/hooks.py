import functools


def _clear(module):
    module.zero_grad()


def make_clear(module):
    return functools.partial(_clear, module)
