#!/bin/bash
set -x

run_exp() {
  local name=$1
  uv run --isolated -m skyrl_train.entrypoints.main_base \
    trainer.policy.model.path="$MODEL" \
    trainer.policy.optimizer_config.lr=$LR \
    trainer.run_name="${name}"
}

MODEL=Qwen/Qwen2.5-1.5B-Instruct
LR=1.0e-6
run_exp gsm8k_grpo
