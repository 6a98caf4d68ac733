trl grpo --dataset_name trl-lib/tldr --model_name_or_path Qwen/Qwen2-0.5B-Instruct \
  --reward_funcs accuracy --learning_rate 0.000001 --output_dir out/grpo
