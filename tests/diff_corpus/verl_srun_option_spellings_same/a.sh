#!/bin/bash
#SBATCH --job-name=verl-grpo
#SBATCH --nodes=2
set -x
srun --nodes=2 --ntasks-per-node=1 --gpus-per-node=8 --cpus-per-task=64 --label --kill-on-bad-exit=1 \
    python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \
    data.train_batch_size=1024 actor_rollout_ref.rollout.n=5 trainer.nnodes=2
