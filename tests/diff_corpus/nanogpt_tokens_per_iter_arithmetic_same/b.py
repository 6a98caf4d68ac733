batch_size = 12
block_size = 1024
gradient_accumulation_steps = 5 * 8
max_iters = 600_000
lr_decay_iters = max_iters
weight_decay = 0.1
