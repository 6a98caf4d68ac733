from ..common.optim import SGD as optimizer
from ..common.train import train
from ..common.models.retinanet import model


train.max_iter = 270000
train.checkpointer.period = 5000

