"""TRL's trainer driven: the trainer with the run folder's outputs, where a step's time goes, a
resumed run's prompt order, and the graceful stop on signals (its GRPOConfig is grpo_args.py's,
beside the config)."""
