#!/bin/bash
EXP_NAME=qwen2.5_7b_grpo
python mason.py \
    --cluster ai2/jupiter \
    --workspace ai2/tulu-thinker \
    --priority high \
    --pure_docker_mode \
    --preemptible \
    --num_nodes 2 \
    --gpus 8 -- source configs/beaker_configs/ray_node_setup.sh \&\& python open_instruct/grpo_fast.py \
    --exp_name $EXP_NAME \
    --beta 0.0 \
    --num_unique_prompts_rollout 128 \
    --num_samples_per_prompt_rollout 16 \
    --learning_rate 1e-6 \
    --advantage_normalization_type centered \
    --per_device_train_batch_size 1 \
    --kl_estimator kl3 \
    --dataset_mixer_list ai2-adapt-dev/rlvr_gsm8k_zs 1.0 \
    --max_token_length 10240 \
    --response_length 8192 \
    --model_name_or_path Qwen/Qwen2.5-7B \
    --apply_verifiable_reward true \
    --seed 1 \
    --with_tracking
