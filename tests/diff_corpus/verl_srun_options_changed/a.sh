#!/bin/bash
#SBATCH --job-name=verl-grpo
#SBATCH --nodes=2
srun -N 2 -n 2 -J 0x10 -K -l --exclusive --cpu-bind=cores \
    python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \
    data.train_batch_size=1024 trainer.nnodes=2
