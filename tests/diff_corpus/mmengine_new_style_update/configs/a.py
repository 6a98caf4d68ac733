from mmengine.config import read_base

with read_base():
    from .._base_.models.mask_rcnn_r50_fpn import *
    from .._base_.schedules.schedule_1x import *

model.update(dict(backbone=dict(depth=101)))

