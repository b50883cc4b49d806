"""nerfstudio's nerfacto and vanilla-nerf on CPU with random weights (MODULE:FUNC targets).

LPIPS pitfall: both models build torchmetrics' LearnedPerceptualImagePatchSimilarity in
populate_modules, which downloads pretrained weights at construction: offline that fails.
The metrics are only used for evaluation, so they are replaced by inert stand-ins first.
"""

import sys
import types

import torch


class _Metric(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, *args, **kwargs):
        return torch.zeros(())


def _no_metric_downloads():
    for name in (
        "torchmetrics",
        "torchmetrics.image",
        "torchmetrics.image.lpip",
        "torchmetrics.functional",
    ):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["torchmetrics.image"].PeakSignalNoiseRatio = _Metric
    sys.modules["torchmetrics.image.lpip"].LearnedPerceptualImagePatchSimilarity = _Metric
    sys.modules["torchmetrics.functional"].structural_similarity_index_measure = lambda *a, **k: (
        torch.zeros(())
    )


def _rays(n=64):
    from nerfstudio.cameras.rays import RayBundle

    torch.manual_seed(0)
    d = torch.nn.functional.normalize(torch.randn(n, 3), dim=-1)
    return RayBundle(
        origins=torch.zeros(n, 3) - 0.5 * d,
        directions=d,
        pixel_area=torch.full((n, 1), 1e-4),
        camera_indices=torch.zeros(n, 1, dtype=torch.long),
    )


def _box():
    from nerfstudio.data.scene_box import SceneBox

    return SceneBox(aabb=torch.tensor([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]]))


def nerfacto():
    _no_metric_downloads()
    from nerfstudio.models.nerfacto import NerfactoModel, NerfactoModelConfig

    torch.manual_seed(0)
    config = NerfactoModelConfig(implementation="torch", log2_hashmap_size=15)
    model = NerfactoModel(config=config, scene_box=_box(), num_train_data=1).eval()
    return model, (_rays(),)


def vanilla():
    _no_metric_downloads()
    from nerfstudio.models.vanilla_nerf import NeRFModel, VanillaModelConfig

    torch.manual_seed(0)
    model = NeRFModel(config=VanillaModelConfig(), scene_box=_box(), num_train_data=1).eval()
    return model, (_rays(),)
