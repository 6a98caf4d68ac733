uv run python -m sft.train \
    --epochs 3 \
    --lr 1e-5 \
    --model_name Qwen/Qwen3-0.6B \
    &> log.txt
