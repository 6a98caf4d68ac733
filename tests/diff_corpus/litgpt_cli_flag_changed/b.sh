#!/bin/bash
litgpt finetune_lora meta-llama/Llama-2-7b-hf \
  --data Alpaca2k \
  --train.epochs=5 \
  --train.micro_batch_size 2 \
  --out_dir out/lora
