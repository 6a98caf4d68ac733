batch_size = 12
block_size = 1024
gradient_accumulation_steps = 40
max_iters = 600000
lr_decay_iters = 600000
weight_decay = 1e-1
