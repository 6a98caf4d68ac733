#!/bin/bash
# one launch script, every environment in a row (RAGEN style)
USE_PPO="algorithm.adv_estimator=gae"
USE_BASE="algorithm.kl_ctrl.kl_coef=0.001 actor_rollout_ref.actor.kl_loss_coef=0.001"

python train.py --config-name _1_bandit system.CUDA_VISIBLE_DEVICES="0" trainer.experiment_name=bandit-ppo $USE_PPO $USE_BASE
python train.py --config-name _2_sokoban system.CUDA_VISIBLE_DEVICES="0" trainer.experiment_name=sokoban-ppo $USE_PPO $USE_BASE
python train.py --config-name _3_frozen_lake system.CUDA_VISIBLE_DEVICES="0" trainer.experiment_name=frozenlake-ppo $USE_PPO $USE_BASE
python train.py --config-name _4_countdown system.CUDA_VISIBLE_DEVICES="0" trainer.experiment_name=countdown-ppo $USE_PPO $USE_BASE
python train.py --config-name _5_metamathqa system.CUDA_VISIBLE_DEVICES="0" trainer.experiment_name=metamathqa-ppo $USE_PPO $USE_BASE
python train.py --config-name _6_webshop system.CUDA_VISIBLE_DEVICES="0" trainer.experiment_name=webshop-ppo $USE_PPO algorithm.kl_ctrl.kl_coef=0.001 actor_rollout_ref.actor.kl_loss_coef=0.01
