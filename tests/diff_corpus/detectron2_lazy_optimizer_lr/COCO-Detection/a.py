from ..common.optim import SGD as optimizer
from ..common.train import train
from ..common.models.retinanet import model


optimizer.lr = 0.01
train.max_iter = 90000

