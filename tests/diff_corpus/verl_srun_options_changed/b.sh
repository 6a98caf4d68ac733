#!/bin/bash
#SBATCH --job-name=verl-grpo
#SBATCH --nodes=2
srun --nodes=4 --ntasks 2 -J 16 -K0 --exclusive=user --cpu-bind cores \
    python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \
    data.train_batch_size=1024 trainer.nnodes=2
