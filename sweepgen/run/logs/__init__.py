"""What a run's trainer logged, whatever wrote it: metrics files, trainer states, TensorBoard, W&B."""
