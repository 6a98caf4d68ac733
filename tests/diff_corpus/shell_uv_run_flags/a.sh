uv run --frozen --extra gpu python -m sft.train --lr 1e-5
