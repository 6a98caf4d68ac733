#!/bin/bash
NNODES=${NNODES:-2}
GPUS=${GPUS_PER_NODE:-8}
OUT=runs/$(date +%Y%m%d)
torchrun --nnodes $NNODES --nproc_per_node $GPUS -m open_instruct.finetune --output_dir $OUT --lr 2e-5
