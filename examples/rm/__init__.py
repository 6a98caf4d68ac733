"""A stand-in for the reward-model trainer of specs/rm_ablation.yaml (see examples/README.md)."""
