dataset_type = 'CocoDataset'
data_root = 'data/coco/'
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='Resize', scale=(1333, 800), keep_ratio=True),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PackDetInputs')
]
train_dataloader = dict(
    batch_size=2, num_workers=2,
    dataset=dict(type=dataset_type, data_root=data_root,
                 ann_file='annotations/instances_train2017.json', pipeline=train_pipeline))
