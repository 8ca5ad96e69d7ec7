"""Training for a time budget (`--max_train_minutes`): the callback that stops the run, the progress bar that
shows the budget, and the learning-rate schedule that decays to 0 when the budget runs out
(`--lr_decay_to_budget`, applied by `hf_seq2seq.training.trainer.TimeBudgetSeq2SeqTrainer`)."""

import logging
import time

import torch
from tqdm.auto import tqdm
from transformers import TrainerCallback
from transformers.trainer_callback import ProgressCallback

logger = logging.getLogger(__name__)


class TimeBudgetCallback(TrainerCallback):
    """Stop after `minutes` of training, with a final evaluation and checkpoint so the best model is kept.

    With several processes the slowest clock decides (an all-reduce per step), so that all of them stop at the
    same step: one that stopped alone would leave the others waiting in their next gradient all-reduce. The
    same synchronised clock drives `TimeBudgetSchedule`, so every process applies the same learning rate.
    """

    def __init__(self, minutes: float):
        self.seconds = minutes * 60
        self.start = 0.0
        self.elapsed = 0.0

    def fraction_left(self) -> float:
        return max(0.0, 1.0 - self.elapsed / self.seconds)

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        elapsed = time.monotonic() - self.start
        if args.world_size > 1:
            clock = torch.tensor(elapsed, dtype=torch.float64, device=args.device)
            torch.distributed.all_reduce(clock, op=torch.distributed.ReduceOp.MAX)
            elapsed = clock.item()
        self.elapsed = elapsed
        if elapsed >= self.seconds:
            logger.info("time budget of %.1f min reached at step %d", self.seconds / 60, state.global_step)
            control.should_training_stop = True
            control.should_evaluate = args.eval_strategy != "no"
            control.should_save = True
        return control


class TimeBudgetProgress(ProgressCallback):
    """The training bar of a time-budgeted run: time used against the budget, with the steps so far (the
    default bar counts towards `num_train_epochs`, which a budgeted run never reaches)."""

    def __init__(self, budget: TimeBudgetCallback):
        super().__init__()
        self.budget = budget

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.training_bar = tqdm(
                total=self.budget.seconds / 60,
                unit="min",
                bar_format="{percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} min of the time budget{postfix}",
                dynamic_ncols=True,
            )

    def on_step_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.training_bar.n = min(self.budget.elapsed, self.budget.seconds) / 60
            self.training_bar.set_postfix_str(f"step {state.global_step}", refresh=True)


class TimeBudgetSchedule:
    """Learning-rate factor: linear warmup over `warmup_steps`, times a linear decay over the time budget that
    reaches 0 when it runs out. Under a time budget the number of steps is unknown in advance, and ending at
    learning rate 0 is worth much more than the slowly decaying tail of inverse-square-root."""

    def __init__(self, warmup_steps: int, budget: TimeBudgetCallback):
        self.warmup_steps = warmup_steps
        self.budget = budget

    def __call__(self, step: int) -> float:
        return min(1.0, (step + 1) / max(1, self.warmup_steps)) * self.budget.fraction_left()
