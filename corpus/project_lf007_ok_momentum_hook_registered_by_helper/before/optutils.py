import torch


def heavy_ball(opt, beta):
    """Momentum by keeping the gradient buffer: after each step, g <- beta * g."""
    def decay(o, args, kwargs):
        with torch.no_grad():
            for group in o.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(beta)
    opt.register_step_post_hook(decay)
    return opt
