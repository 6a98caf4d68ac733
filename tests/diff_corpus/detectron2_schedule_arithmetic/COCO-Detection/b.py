from ..common.optim import SGD as optimizer
from ..common.train import train
from ..common.models.retinanet import model


train.max_iter = 90000 * 3
train.checkpointer.period = train.eval_period

