#!/bin/bash
LR=1e-5; export LR
export VLLM_ATTENTION_BACKEND=XFORMERS
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.optim.lr=$LR
