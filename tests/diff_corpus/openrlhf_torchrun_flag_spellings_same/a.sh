#!/bin/bash
srun -N 2 --ntasks-per-node=1 torchrun --nnodes 2 --nproc_per_node 8 --rdzv_backend c10d \
    --rdzv_endpoint "$MASTER_ADDR:29500" --max_restarts=0 -m openrlhf.cli.train_sft \
    --pretrain meta-llama/Meta-Llama-3-8B --micro_train_batch_size 2 --learning_rate 5e-6
