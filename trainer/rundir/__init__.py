"""The run folder a training run leaves: config.yaml, metrics.jsonl, samples.jsonl, summary.json,
checkpoints checked before a resume, and the diversity of completions (summary and eval)."""
