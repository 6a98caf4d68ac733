ray job submit --address="http://127.0.0.1:8265" \
    --runtime-env=verl/trainer/runtime_env.yaml \
    --no-wait \
    -- python3 -m verl.trainer.main_ppo \
    trainer.project_name=verl_dapo \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    reward_model.reward_manager=dapo
