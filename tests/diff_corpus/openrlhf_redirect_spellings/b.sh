deepspeed --module openrlhf.cli.train_rm --max_epochs 1 --save_path ./ckpt/rm >> logs/rm.log 2>&1
