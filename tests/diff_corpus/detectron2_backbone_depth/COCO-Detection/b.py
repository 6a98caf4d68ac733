from ..common.optim import SGD as optimizer
from ..common.train import train
from ..common.models.retinanet import model


model.backbone.depth = 101
model.num_classes = 91

