"""Config A: the baseline."""
from ml_collections import config_dict


def get_config():
  """Baseline."""
  c = config_dict.ConfigDict()
  c.steps = 1000  # short run
  c.schedule = config_dict.create(kind='cosine', warmup=100)
  return c
