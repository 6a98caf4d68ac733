#!/bin/bash
deepspeed --module openrlhf.cli.train_dpo \
   --beta 0.1 \
   --learning_rate 5e-7 \
   --max_len 8192
