#!/bin/bash
set -x
MODEL=llama3_lora_sft
CUDA_VISIBLE_DEVICES=0,1 FORCE_TORCHRUN=1 llamafactory-cli train examples/train_lora/${MODEL}.yaml
llamafactory-cli export examples/merge_lora/${MODEL}.yaml
