torchrun --standalone --nproc_per_node=4 train.py config/train_gpt2.py --batch_size=32 --compile=False --wandb_log=True
