set -x
# experiment names derived from the model by parameter expansion (SkyRL style)
DATA_DIR="$HOME/data/gsm8k"
NUM_GPUS=4
MODEL="Qwen/Qwen2.5-3B-Instruct"
LOGGER="${LOGGER:-wandb}"
RUN_NAME="gsm8k_${MODEL##*/}_${NUM_GPUS}gpu"
uv run --isolated --extra vllm -m skyrl_train.entrypoints.main_base \
  data.train_data="['$DATA_DIR/train.parquet']" \
  trainer.policy.model.path="$MODEL" \
  trainer.placement.policy_num_gpus_per_node=$NUM_GPUS \
  trainer.logger="$LOGGER" \
  trainer.project_name="${PROJECT:-gsm8k}" \
  trainer.run_name="${RUN_NAME,,}" \
  trainer.ckpt_path="$HOME/ckpts/${RUN_NAME%_*}"
