python -m openrlhf.cli.train_ppo --target_modules q_proj v_proj k_proj --eval_range 0 2 --tag a --tag b
