#!/bin/bash
#SBATCH --job-name="neox"
#SBATCH --partition=g40
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --exclusive
export NCCL_DEBUG=WARN
TRAIN_PATH=/fsx/gpt-neox
cd $TRAIN_PATH
python $TRAIN_PATH/deepy.py $TRAIN_PATH/train.py --conf_dir configs 125M.yml local_setup.yml
