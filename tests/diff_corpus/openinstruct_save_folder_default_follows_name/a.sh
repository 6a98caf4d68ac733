#!/bin/bash
# the checkpoint folder defaults to the experiment's name unless the caller sets SAVE_FOLDER
EXP_NAME="olmo2 1b rlvr think"
SAVE_FOLDER="${SAVE_FOLDER:-/weka/checkpoints/$EXP_NAME}"
MODEL="allenai/OLMo-2-0425-1B-SFT"
python open_instruct/grpo_fast.py \
    --exp_name "$EXP_NAME" \
    --output_dir "$SAVE_FOLDER" \
    --run_name "${EXP_NAME// /_}_${MODEL##*/}" \
    --model_name_or_path "$MODEL" \
    --learning_rate 3e-7
