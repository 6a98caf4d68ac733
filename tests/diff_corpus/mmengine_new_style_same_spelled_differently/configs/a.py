from mmengine.config import read_base

with read_base():
    from .._base_.models.mask_rcnn_r50_fpn import *
    from .._base_.schedules.schedule_1x import *

model['backbone']['depth'] = 101
max_epochs = 24

