"""Config A: the baseline, rewritten."""
from ml_collections import config_dict


def get_config():
  """Baseline (same values)."""
  c = config_dict.ConfigDict()
  c.steps = 1_000
  c.schedule = config_dict.create(
      kind="cosine",
      warmup=100,
  )
  return c
