"""The bundled GRPO trainer: ``python -m sweepgen_trainer CONFIG.yaml``.

Importing this package is cheap and torch-free: the core imports ``sweepgen_trainer.config`` as a spec schema.
Modules that need torch/transformers/trl import them themselves.
"""
