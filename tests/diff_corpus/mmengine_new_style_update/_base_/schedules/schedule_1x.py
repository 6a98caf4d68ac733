from mmengine.optim import OptimWrapper
from torch.optim import SGD
max_epochs = 12
optim_wrapper = dict(type=OptimWrapper, optimizer=dict(type=SGD, lr=0.02, momentum=0.9))
