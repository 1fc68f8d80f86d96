"""Training-step helpers: an object that clears the gradients of the optimizer it is given."""


class GradientReset:
    def __call__(self, optimizer):
        optimizer.zero_grad(set_to_none=True)


reset_gradients = GradientReset()
