from ..common.optim import AdamW as optimizer
