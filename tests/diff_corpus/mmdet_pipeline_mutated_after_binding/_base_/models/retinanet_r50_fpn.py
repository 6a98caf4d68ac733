model = dict(
    type='RetinaNet',
    backbone=dict(type='ResNet', depth=50, num_stages=4, out_indices=(0, 1, 2, 3), frozen_stages=1,
                  norm_cfg=dict(type='BN', requires_grad=True), style='pytorch'),
    neck=dict(type='FPN', in_channels=[256, 512, 1024, 2048], out_channels=256, start_level=1,
              add_extra_convs='on_input', num_outs=5),
    bbox_head=dict(type='RetinaHead', num_classes=80, in_channels=256, stacked_convs=4))
