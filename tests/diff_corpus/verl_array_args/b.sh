#!/bin/bash
ARGS=(
    data.train_batch_size=256
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.entropy_coeff=0
)
python3 -m verl.trainer.main_ppo "${ARGS[@]}" trainer.logger=['console','wandb'] &>> train.log
