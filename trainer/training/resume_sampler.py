"""The prompt order of a resumed run: the same, epoch for epoch, as the uninterrupted run's.

TRL's ``RepeatSampler`` shuffles the prompts with one private ``torch.Generator``, seeded once and
advanced by one ``randperm`` per pass over the data: the order of epoch *e* is the *e*-th draw.
transformers 5 resumes by jumping to the checkpoint's epoch and skipping the batches already
trained in it; it no longer replays the earlier epochs' iterators, and it restores the global RNG
states, not this generator. So a run resumed in its second or third epoch drew epoch 0's order
again: other prompts from the first resumed step on, and tokens, entropy, KL, loss and rewards
diverged from the uninterrupted run. A checkpoint in the first epoch hid it.

``set_epoch`` (which transformers calls on the sampler before every epoch, resumed or not) re-derives
the generator state of epoch *e* from the seed: the uninterrupted order is unchanged, draw for draw,
and a resumed run gets the order it would have had.
"""

from __future__ import annotations

from typing import Any

import torch
from trl.trainer.utils import RepeatSampler


class EpochSeededRepeatSampler(RepeatSampler):
    @classmethod
    def like(cls, sampler: Any) -> EpochSeededRepeatSampler:
        """The resumable twin of the RepeatSampler TRL built, through RepeatSampler's constructor and
        with TRL's arguments (a fresh sampler draws exactly what TRL's fresh one would)."""
        if type(sampler) is not RepeatSampler:  # TRL chose another sampler: this order is not known
            raise RuntimeError(
                f"TRL's train sampler is a {type(sampler).__name__}, not the RepeatSampler whose "
                "resume order trainer/training/resume_sampler.py keeps; see docs/TRAINER.md (TRL overrides)"
            )
        return cls(
            data_source=sampler.data_source,
            mini_repeat_count=sampler.mini_repeat_count,
            batch_size=sampler.batch_size,
            repeat_count=sampler.repeat_count,
            shuffle=sampler.shuffle,
            seed=sampler.seed,
        )

    def set_epoch(self, epoch: int) -> None:
        if not self.shuffle or self.seed is None:
            return  # unshuffled: no state; unseeded: not reproducible in the first place
        self.generator.manual_seed(self.seed)
        for _ in range(epoch):  # the draws of the epochs before this one
            torch.randperm(self.num_samples, generator=self.generator)
