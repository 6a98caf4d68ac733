from mmengine.config import read_base

with read_base():
    from .._base_.models.mask_rcnn_r50_fpn import *
    from .._base_.schedules.schedule_1x import *

# deeper backbone, longer schedule
model.backbone.depth = 50 + 51
max_epochs = max_epochs * 2

