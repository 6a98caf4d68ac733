#!/bin/bash
python scripts/filter_prompts.py --min_len 16 --out data/filtered.jsonl
deepspeed --module openrlhf.cli.train_dpo \
   --beta 0.1 \
   --learning_rate 5e-7 \
   --max_len 8192
