from detectron2.config import LazyCall as L
from detectron2.modeling.meta_arch import RetinaNet
from detectron2.modeling.backbone import ResNet, BasicStem

model = L(RetinaNet)(
    backbone=L(ResNet)(stem=L(BasicStem)(in_channels=3, out_channels=64), depth=50),
    num_classes=80,
    head_in_features=["p3", "p4", "p5", "p6", "p7"],
)
