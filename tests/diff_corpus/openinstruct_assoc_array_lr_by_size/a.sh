#!/bin/bash
# learning rate and batch per model size, chosen by the first argument (open-instruct style sweep)
set -euo pipefail
SIZE=${1:-8b}
declare -A LR=([1b]=5e-6 [8b]=5e-7 [70b]=2e-7)
declare -A GRAD_ACC=([1b]=4 [8b]=16 [70b]=32)
accelerate launch --mixed_precision bf16 --num_processes 8 \
    open_instruct/finetune.py \
    --model_name_or_path "allenai/Llama-3.1-Tulu-3-${SIZE^^}-SFT" \
    --learning_rate "${LR[$SIZE]}" \
    --gradient_accumulation_steps "${GRAD_ACC[$SIZE]}" \
    --output_dir "output/sft_${SIZE}"
