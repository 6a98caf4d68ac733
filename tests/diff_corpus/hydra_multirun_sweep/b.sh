python train.py -m hydra/launcher=submitit_slurm optimizer.lr=1e-3,1e-4,1e-5 seed=range(0,3)
