from ..common.optim import SGD as optimizer
