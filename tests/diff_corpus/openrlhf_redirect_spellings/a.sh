deepspeed --module openrlhf.cli.train_rm --save_path ./ckpt/rm --max_epochs 1 &>> logs/rm.log
