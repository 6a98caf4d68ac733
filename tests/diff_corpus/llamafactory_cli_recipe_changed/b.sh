#!/bin/bash
set -x
MODEL=llama3_lora_dpo
CUDA_VISIBLE_DEVICES=0,1,2,3 FORCE_TORCHRUN=1 llamafactory-cli train examples/train_lora/${MODEL}.yaml
llamafactory-cli export examples/merge_lora/${MODEL}.yaml
