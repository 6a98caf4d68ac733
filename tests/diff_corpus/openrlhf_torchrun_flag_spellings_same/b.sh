#!/bin/bash
srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d \
    --rdzv-endpoint "$MASTER_ADDR:29500" --max-restarts 0 -m openrlhf.cli.train_sft \
    --pretrain meta-llama/Meta-Llama-3-8B --micro_train_batch_size 2 --learning_rate 5e-6
