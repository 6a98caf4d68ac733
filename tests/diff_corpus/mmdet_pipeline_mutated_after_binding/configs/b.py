_base_ = [
    '../_base_/models/retinanet_r50_fpn.py',
    '../_base_/datasets/coco_detection.py',
    '../_base_/schedules/schedule_1x.py',
]

optim_wrapper = dict(optimizer=dict(lr=0.01))
train_pipeline = _base_.train_pipeline
train_pipeline[2]['scale'] = (1000, 600)
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))

