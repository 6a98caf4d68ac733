from mmdet.models import MaskRCNN, ResNet, FPN
model = dict(
    type=MaskRCNN,
    backbone=dict(type=ResNet, depth=50, frozen_stages=1),
    neck=dict(type=FPN, in_channels=[256, 512, 1024, 2048], out_channels=256, num_outs=5))
