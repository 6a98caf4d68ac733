_base_ = ['../_base_/models/retinanet_r50_fpn.py', '../_base_/schedules/schedule_1x.py']
model = dict(backbone=dict(depth=101))
