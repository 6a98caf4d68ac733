#!/bin/bash
LR=3e-4; export LR
export VLLM_ATTENTION_BACKEND=XFORMERS
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.optim.lr=$LR
