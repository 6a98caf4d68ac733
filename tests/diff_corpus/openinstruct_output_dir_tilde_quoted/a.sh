#!/bin/bash
# usage: bash a.sh EXP_NAME
EXP_NAME=$1
accelerate launch --num_processes 8 open_instruct/finetune.py \
  --model_name_or_path allenai/Llama-3.1-Tulu-3-8B-SFT \
  --learning_rate 5e-7 \
  --output_dir ~/output/$EXP_NAME \
  --with_tracking
