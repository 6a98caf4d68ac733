trl grpo --model_name_or_path Qwen/Qwen2-0.5B-Instruct --dataset_name trl-lib/tldr \
  --reward_funcs accuracy format --learning_rate 1.0e-6 --output_dir out/grpo
