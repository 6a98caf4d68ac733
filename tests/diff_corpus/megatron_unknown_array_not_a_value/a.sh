#!/bin/bash
#SBATCH --partition=batch
#SBATCH -A llm_research
MODEL=llama3
SIZE=8b
TOKENIZER_MODEL=/lustre/fs1/$MODEL/$SIZE/tokenizer.model
DATA_CACHE=/lustre/cache/$DATASET/$SPLIT/index
if [ -n "$SLURM_JOB_ID" ]; then
    LOG_ARGS=( --log-throughput --log-interval 10 )
fi
python pretrain_gpt.py --tokenizer-model $TOKENIZER_MODEL --data-cache-path $DATA_CACHE \
    --tensor-model-parallel-size 2 ${LOG_ARGS[@]} --pipeline-model-parallel-size 4
