_base_ = [
    '../_base_/models/retinanet_r50_fpn.py',
    '../_base_/datasets/coco_detection.py',
    '../_base_/schedules/schedule_1x.py',
]

max_epochs = 2 * 12
train_cfg = dict(max_epochs=max_epochs)
auto_scale_lr = dict(enable=False, base_batch_size=8 * 2)  # 8 GPUs x 2 images

