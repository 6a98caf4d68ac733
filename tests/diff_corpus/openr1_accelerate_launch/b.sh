ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/zero3.yaml \
    --num_processes 6 \
    src/open_r1/grpo.py --config recipes/Qwen2.5-Math-7B/grpo/config_simple_rl.yaml \
    --vllm_mode colocate
