python -m openrlhf.cli.train_ppo --target_modules q_proj v_proj --eval_range 0 1 --tag a --tag b
