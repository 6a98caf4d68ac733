"""Which process writes (trainer/ranks.py), and the stop every rank agrees on (signals.GracefulStop.agree)."""

from __future__ import annotations

import signal

import pytest

from sweepgen_trainer import ranks
from sweepgen_trainer.training.signals import GracefulStop


@pytest.mark.parametrize(
    "env, rank, world, main",
    [
        ({}, 0, 1, True),
        ({"RANK": "1", "WORLD_SIZE": "2"}, 1, 2, False),
        ({"RANK": "0", "WORLD_SIZE": "2"}, 0, 2, True),
        ({"SLURM_PROCID": "3", "WORLD_SIZE": "4"}, 3, 4, False),
        ({"SLURM_PROCID": "3"}, 0, 1, True),  # no launcher's world: the one process writes
        ({"RANK": "x", "WORLD_SIZE": "2"}, 0, 2, True),
    ],
)
def test_rank_and_world_come_from_the_launcher(monkeypatch, env, rank, world, main):
    for name in ("RANK", "WORLD_SIZE", "SLURM_PROCID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert (ranks.rank(), ranks.world_size(), ranks.is_main()) == (rank, world, main)


def test_one_process_needs_no_device_arguments(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert ranks.device_kwargs() == {}


def _agree(rank: int, port: int, out: dict) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    stop = GracefulStop()
    if rank == 0:
        stop.signum = int(signal.SIGTERM)  # only rank 0 got the signal
    stop.agree("cpu")
    out[rank] = stop.signum
    dist.destroy_process_group()


@pytest.mark.train
def test_a_stop_one_rank_received_is_every_ranks(free_tcp_port):
    import torch.multiprocessing as mp

    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_agree, args=(free_tcp_port, out), nprocs=2, join=True)
        assert dict(out) == {0: int(signal.SIGTERM), 1: int(signal.SIGTERM)}
