_base_ = [
    '../_base_/models/retinanet_r50_fpn.py',
    '../_base_/datasets/coco_detection.py',
    '../_base_/schedules/schedule_1x.py',
]

optim_wrapper = dict(_delete_=True, type='AmpOptimWrapper', optimizer=dict(type='AdamW', lr=0.0001, weight_decay=0.05))

