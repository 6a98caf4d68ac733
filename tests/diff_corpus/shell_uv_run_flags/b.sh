uv run --frozen --extra cpu python -m sft.train --lr 1e-5
