"""Training for a budget of time (`--max_train_minutes`) or of training tokens (`--max_train_tokens`), or both:
the callback that counts and stops the run, the progress bar that shows the budget, and the learning-rate
schedule that decays to 0 when the budget runs out (`--lr_decay_to_budget`); the Trainer that feeds them the
batches and applies the schedule is `hf_seq2seq.training.trainer.BudgetSeq2SeqTrainer`.

A token budget makes runs on different machines, or on one machine on a busy day, train on the same data: a
time budget measures the machine as much as the recipe."""

import logging
import time

import torch
from tqdm.auto import tqdm
from transformers import TrainerCallback
from transformers.trainer_callback import ProgressCallback

logger = logging.getLogger(__name__)


def batch_tokens(inputs: dict) -> torch.Tensor:
    """The training tokens of a batch that a token budget counts: source tokens (`attention_mask`) plus target
    tokens (`labels`, end-of-sentence included), padding excluded on both sides; the count of `hf-seq2seq
    benchmark`'s training tokens/s."""
    return inputs["attention_mask"].sum() + (inputs["labels"] != -100).sum()


class TrainingBudget(TrainerCallback):
    """Stop after `minutes` of training or `tokens` training tokens (`batch_tokens`, summed over processes),
    whichever runs out first, with a final evaluation and checkpoint so the best model is kept. Either may be
    None (or 0): no limit of that kind. Both count from the start of this training session (a resumed
    run starts them anew).

    With several processes the slowest clock and the sum of all processes' tokens decide (an all-reduce per
    step), so that all of them stop at the same step: one that stopped alone would leave the others waiting in
    their next gradient all-reduce. The same synchronised figures drive `BudgetSchedule`, so every process
    applies the same learning rate.

    The tokens are counted on the batches' device, and read on the host only when needed: every step under a
    token budget, but only when asked (the report, a log line) under a budget of time alone in one process. On a
    GPU each read waits until the device has run every queued kernel, which would drain the queue each step.
    """

    def __init__(self, minutes: float | None = None, tokens: int | None = None):
        if not (minutes or tokens):
            raise ValueError("a training budget needs minutes or tokens")
        self.seconds = minutes * 60 if minutes else None
        self.tokens = tokens or None
        self.start = 0.0
        self.elapsed = 0.0
        self.first_step_elapsed: float | None = None  # the clock at the end of this session's first step
        self._trained = 0  # by all processes, read on the host
        self._unread = 0  # by all processes in past steps, not read yet (a tensor on the device)
        self._local_tokens = 0  # by this process in this step (a tensor on its device once counted)

    @property
    def tokens_trained(self) -> int:
        """Tokens trained on by all processes as of the last step's end."""
        if isinstance(self._unread, torch.Tensor):
            self._trained += int(self._unread.item())
        self._unread = 0
        return self._trained

    @tokens_trained.setter
    def tokens_trained(self, value: int) -> None:
        self._trained, self._unread = value, 0

    def count(self, inputs: dict) -> None:
        """Add a batch that this process trains on (each micro-batch, under gradient accumulation)."""
        self._local_tokens = self._local_tokens + batch_tokens(inputs)

    def fraction_left(self) -> float:
        """What is left of the budget that runs out first."""
        used = [self.elapsed / self.seconds] if self.seconds else []
        if self.tokens:
            used.append(self.tokens_trained / self.tokens)
        return max(0.0, 1.0 - max(used))

    def schedule_fraction_left(self) -> float:
        """What is left of the budget for the learning-rate schedule (`BudgetSchedule`): as `fraction_left`, with
        the time counted from the end of the first step. The first step holds what happens once (compiling the
        model under `--torch_compile`, the first allocations), which can take a good share of a short budget: a
        warmup of a share of the budget then still spans training steps, not the seconds of a compilation."""
        used = []
        if self.seconds:
            first = self.first_step_elapsed or 0.0  # before the first step ends: from the start
            span = self.seconds - first
            used.append((self.elapsed - first) / span if span > 0 else 1.0)
        if self.tokens:
            used.append(self.tokens_trained / self.tokens)
        return max(0.0, 1.0 - max(used))

    def describe(self) -> str:
        """The budget used so far, e.g. "3.1/22.0 min, 1,200,000/5,000,000 tokens"."""
        parts = []
        if self.seconds:
            parts.append(f"{min(self.elapsed, self.seconds) / 60:.1f}/{self.seconds / 60:.1f} min")
        if self.tokens:
            parts.append(f"{self.tokens_trained:,}/{self.tokens:,} tokens")
        return ", ".join(parts)

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.monotonic()
        self.tokens_trained, self._local_tokens = 0, 0
        self.first_step_elapsed = None

    def on_step_end(self, args, state, control, **kwargs):
        elapsed = time.monotonic() - self.start
        tokens = torch.as_tensor(self._local_tokens, dtype=torch.int64, device=args.device)
        if args.world_size > 1:
            clock = torch.tensor(elapsed, dtype=torch.float64, device=args.device)
            torch.distributed.all_reduce(clock, op=torch.distributed.ReduceOp.MAX)
            torch.distributed.all_reduce(tokens, op=torch.distributed.ReduceOp.SUM)
            elapsed = clock.item()
        self.elapsed = elapsed
        if self.first_step_elapsed is None:
            self.first_step_elapsed = elapsed
        self._unread = self._unread + tokens
        self._local_tokens = 0
        if self.seconds and elapsed >= self.seconds:
            logger.info("time budget of %.1f min reached at step %d", self.seconds / 60, state.global_step)
        elif self.tokens and self.tokens_trained >= self.tokens:
            logger.info("token budget of %d tokens reached at step %d", self.tokens, state.global_step)
        else:
            return control
        control.should_training_stop = True
        control.should_evaluate = args.eval_strategy != "no"
        control.should_save = True
        return control


class BudgetProgress(ProgressCallback):
    """The training bar of a budgeted run: the share of the budget used, with the budget's figures and the steps
    so far (the default bar counts towards `num_train_epochs`, which a budgeted run never reaches)."""

    def __init__(self, budget: TrainingBudget):
        super().__init__()
        self.budget = budget

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.training_bar = tqdm(
                total=100,
                bar_format="{percentage:3.0f}%|{bar}| of the budget{postfix}",
                dynamic_ncols=True,
            )

    def on_step_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.training_bar.n = 100 * (1.0 - self.budget.fraction_left())
            self.training_bar.set_postfix_str(
                f"{self.budget.describe()}, step {state.global_step}", refresh=True
            )


class BudgetSchedule:
    """Learning-rate factor: linear warmup, times a linear decay over the budget that reaches 0 when it runs out
    (the one that runs out first, when both are set; its time counted from the end of the first step:
    `TrainingBudget.schedule_fraction_left`). Under a budget the number of steps is unknown in advance,
    and ending at learning rate 0 is worth much more than the slowly decaying tail of inverse-square-root.

    `warmup` is a number of steps, or below 1 a share of the budget (as `--warmup_steps 0.1` is a share of the
    training in transformers): the same schedule then has the same shape on a machine that makes twice the
    steps in the budget, and in a short screening run of a recipe."""

    def __init__(self, warmup: float, budget: TrainingBudget):
        self.warmup = warmup
        self.budget = budget

    def __call__(self, step: int) -> float:
        left = self.budget.schedule_fraction_left()
        if 0 < self.warmup < 1:
            warmed = (1.0 - left) / self.warmup
        else:
            warmed = (step + 1) / max(1, self.warmup)
        return min(1.0, warmed) * left
