uv run python -m sft.train --model_name Qwen/Qwen3-0.6B --lr=1e-5 --epochs 3 > log.txt 2>&1
