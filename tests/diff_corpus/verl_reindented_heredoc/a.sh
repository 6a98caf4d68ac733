#!/bin/bash
read -r -d '' CMD <<EOF
python3 -m verl.trainer.main_ppo \
  data.train_batch_size=512 \
  actor_rollout_ref.actor.optim.lr=1e-6
EOF
$CMD
