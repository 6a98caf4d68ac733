# GRPO recipes as plain dicts: every variant restates the base and overrides a few keys
BASE = {
    "model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct",
    "learning_rate": 1e-6,
    "beta": 0.04,
    "num_generations": 8,
    "max_completion_length": 1024,
}

SMALL = {**BASE, "num_generations": 4}
LONG = {**BASE, "max_completion_length": 4096, "learning_rate": 3e-7}
RECIPES = {"small": SMALL, "long": LONG}
