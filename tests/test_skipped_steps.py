"""LF007 reads a step guarded by a schedule over the loop's iterations as a gradient
accumulation (`model.LoopModel.counts_iterations`), and a step skipped on purpose (a bad
batch, a gradient spike, a strong discriminator, a frozen phase) as what it is: there the
`zero_grad()` at the top of the loop is what drops the skipped batch's gradients. The
skipping scripts are run: each steps on the iterations it means to, and keeps its weights
finite or frozen."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

HEADER = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
stepped = []
"""

# (loop, the iterations it steps on)
SKIPS = {
    "frozen_phase_behind_a_function": (
        """
WARMUP = 2


def is_trainable_step(i):
    return i >= WARMUP


for i in range(5):
    optimizer.zero_grad()
    F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
    if is_trainable_step(i):
        optimizer.step()
        stepped.append(i)
""",
        [2, 3, 4],
    ),
    "every_kth_batch_held_out": (
        """
for i in range(8):
    optimizer.zero_grad()
    F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
    noise = model.weight.grad.norm().item()
    if i % 4 != 3:
        optimizer.step()
        stepped.append(i)
""",
        [0, 1, 2, 4, 5, 6],
    ),
    "every_kth_batch_held_out_by_a_bare_remainder": (
        """
for i in range(6):
    optimizer.zero_grad()
    F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
    if i % 3:
        optimizer.step()
        stepped.append(i)
""",
        [1, 2, 4, 5],
    ),
    **{
        f"every_kth_batch_held_out_written_{name}": (
            f"""
for i in range(6):
    optimizer.zero_grad()
    F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
    {bind}if {test}:
        optimizer.step()
        stepped.append(i)
""",
            steps,
        )
        for name, bind, test, steps in [
            ("below", "", "i % 3 < 2", [0, 1, 3, 4]),
            ("above_zero", "", "(i + 1) % 3 > 0", [0, 1, 3, 4]),
            ("by_membership", "", "i % 3 in (0, 1)", [0, 1, 3, 4]),
            ("negated", "", "not (i % 3 == 2)", [0, 1, 3, 4]),
            ("as_a_named_flag", "do_step = i % 3 != 2\n    ", "do_step", [0, 1, 3, 4]),
        ]
    },
    "gradient_norm_spike": (
        """
for i in range(6):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    if i == 3:
        y = y * 1e6
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    if norm < 1e3:
        optimizer.step()
        stepped.append(i)
""",
        [0, 1, 2, 4, 5],
    ),
    "quality_threshold": (
        """
for i in range(6):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    accuracy = 0.9 if i % 3 == 0 else 0.5
    if accuracy < 0.8:
        optimizer.step()
        stepped.append(i)
""",
        [1, 2, 4, 5],
    ),
    "outer_loop_phase": (
        """
frozen = [p.clone() for p in model.parameters()]
for epoch in range(3):
    for i in range(2):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        if epoch >= 1:
            optimizer.step()
            stepped.append(2 * epoch + i)
    if epoch == 0:
        assert all(torch.equal(p, q) for p, q in zip(model.parameters(), frozen))
""",
        [2, 3, 4, 5],
    ),
    "after_warm_up_iterations": (
        """
for i in range(6):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    if i >= 2:
        optimizer.step()
        stepped.append(i)
""",
        [2, 3, 4, 5],
    ),
}

# six micro-batches, gradients cleared at each, a step under `guard`
EVERY_BATCH_CLEARED = """
for i in range(6):
    optimizer.zero_grad()
    F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
{inside}    if {guard}:
        optimizer.step()
"""

ACCUMULATIONS = {
    "remainder_of_target": EVERY_BATCH_CLEARED.format(inside="", guard="(i + 1) % 3 == 0"),
    "remainder_of_counter": """
step = 0
for x in torch.randn(6, 8, 4):
    optimizer.zero_grad()
    F.mse_loss(model(x), torch.randn(8, 1)).backward()
    step += 1
    if step % 3 == 0:
        optimizer.step()
""",
    "flag": EVERY_BATCH_CLEARED.format(
        inside="    update = (i + 1) % 3 == 0 or i == 5\n", guard="update"
    ),
    "step_computed_from_counts": """
for epoch in range(2):
    for i in range(3):
        global_step = epoch * 3 + i + 1
        optimizer.zero_grad()
        F.mse_loss(model(torch.randn(8, 4)), torch.randn(8, 1)).backward()
        if global_step % 3 == 0:
            optimizer.step()
""",
    "count_kept_by_a_method": """
class Trainer:
    def __init__(self):
        self.global_step = 0

    def tick(self):
        self.global_step = self.global_step + 1

    def fit(self, batches):
        for x in batches:
            self.tick()
            optimizer.zero_grad()
            F.mse_loss(model(x), torch.randn(8, 1)).backward()
            if self.global_step % 3 == 0:
                optimizer.step()


Trainer().fit(torch.randn(6, 8, 4))
""",
    "predicate_of_the_count": "def is_update_step(i, every):\n"
    "    return (i + 1) % every == 0\n"
    + EVERY_BATCH_CLEARED.format(inside="", guard="is_update_step(i, 3)"),
    "listed_steps": "update_steps = {2, 5}\n"
    + EVERY_BATCH_CLEARED.format(inside="", guard="i in update_steps"),
    "counter_set_back": """
micro = 0
for x in torch.randn(6, 8, 4):
    optimizer.zero_grad()
    F.mse_loss(model(x), torch.randn(8, 1)).backward()
    micro = micro + 1
    if micro == 3:
        optimizer.step()
        micro = 0
""",
}


@pytest.mark.parametrize("name", sorted(SKIPS))
def test_a_step_skipped_on_purpose_is_not_an_accumulation(name, tmp_path):
    loop, expected = SKIPS[name]
    source = HEADER + loop + f"assert stepped == {expected}, stepped\n"
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(source) == []


@pytest.mark.parametrize("name", sorted(ACCUMULATIONS))
def test_a_step_every_k_iterations_with_gradients_cleared_every_iteration_is_found(name):
    assert rules_reported(HEADER + ACCUMULATIONS[name]) == ["LF007"]
