"""Default hyperparameters for training a ViT on ImageNet."""
import ml_collections
from ml_collections import config_dict


def get_config():
  """Returns the config."""
  config = ml_collections.ConfigDict()
  config.seed = 0
  config.batch_size = 4096
  config.num_epochs = 300
  config.optimizer = config_dict.create(name='adamw', b1=0.9, b2=0.999, weight_decay=0.05)
  config.lr = ml_collections.ConfigDict()
  config.lr.base = 0.001
  config.lr.warmup_steps = 10000
  config.model = ml_collections.ConfigDict()
  config.model.patch_size = (32, 32)
  config.model.hidden_size = 768 + 256
  config.model.dropout = config_dict.placeholder(float)
  return config
