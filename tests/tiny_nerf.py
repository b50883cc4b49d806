"""A tiny pure-torch NeRF for capture tests: ray sampler, hash grid, skip MLP, renderer.

Shapes are tiny so that a capture costs milliseconds. `build` is a ``MODULE:FUNC``
target for ``nerframe trace capture``; `MAP` classifies its own classes.
"""

from __future__ import annotations

import torch
from torch import nn

RAYS, SAMPLES = 4, 8
LEVELS, FEATURES, LOG2_TABLE = 4, 2, 8
WIDTH, OUT = 16, 4

MAP = """
classes:
  RaySampler:
    op_type: UniformSampler
    params: {B: "out[0][0]", N: "out[0][1]"}
  HashGrid:
    op_type: HashEncoding
    params:
      input_dim: "in[0][-1]"
      num_levels: attr.num_levels
      features_per_level: attr.features_per_level
      log2_hashmap_size: log2(param.table[1])
  SkipMLP:
    op_type: MLP
    rule: linear_layers
  VolumeRenderer:
    op_type: RGBRenderer
    params: {B: "in[0][0]", N: "in[0][1]"}
"""


class RaySampler(nn.Module):
    def __init__(self, num_samples: int, near: float = 0.1, far: float = 2.0) -> None:
        super().__init__()
        self.num_samples, self.near, self.far = num_samples, near, far

    def forward(self, origins: torch.Tensor, directions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        # device=: the sampler's tensors live where the rays do (a CUDA capture)
        t = torch.linspace(self.near, self.far, self.num_samples, device=origins.device)
        points = origins[:, None, :] + directions[:, None, :] * t[None, :, None]
        step = (self.far - self.near) / self.num_samples
        deltas = torch.full((*points.shape[:2], 1), step, device=origins.device)
        return points, deltas + 0 * points[..., :1]


class Jitter(nn.Module):
    """A leaf module no map knows: it must be transparent and reported."""

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        return points * 1.0001


class HashGrid(nn.Module):
    def __init__(self, levels: int, features: int, log2_table: int) -> None:
        super().__init__()
        self.num_levels, self.features_per_level = levels, features
        self.resolutions = [4 * 2**level for level in range(levels)]
        self.table = nn.Parameter(torch.rand(levels, 2**log2_table, features) * 1e-2)
        self.register_buffer("primes", torch.tensor([1, 2654435761, 805459861]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = self.table.shape[1]
        features = []
        for level, resolution in enumerate(self.resolutions):
            corner = torch.floor(x * resolution).long()
            index = (corner * self.primes).sum(-1) % size
            features.append(self.table[level, index])
        return torch.cat(features, dim=-1)


class SkipMLP(nn.Module):
    """Four Linear layers; the third re-reads the input (skip connection at layer 2)."""

    def __init__(self, in_dim: int, width: int, out_dim: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            [
                nn.Linear(in_dim, width),
                nn.Linear(width, width),
                nn.Linear(width + in_dim, width),
                nn.Linear(width, out_dim),
            ]
        )
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for i, layer in enumerate(self.layers):
            if i == 2:
                h = torch.cat([h, x], dim=-1)
            h = layer(h)
            if i < len(self.layers) - 1:
                h = self.act(h)
        return h


class VolumeRenderer(nn.Module):
    def forward(self, rgb: torch.Tensor, sigma: torch.Tensor, deltas: torch.Tensor) -> torch.Tensor:
        alpha = 1 - torch.exp(-sigma * deltas)
        transmittance = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha], 1), 1)
        weights = alpha * transmittance[:, :-1]
        return (weights * rgb).sum(dim=1)


class TinyNeRF(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sampler = RaySampler(SAMPLES)
        self.jitter = Jitter()
        self.grid = HashGrid(LEVELS, FEATURES, LOG2_TABLE)
        self.mlp = SkipMLP(LEVELS * FEATURES, WIDTH, OUT)
        self.renderer = VolumeRenderer()

    def forward(self, origins: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
        points, deltas = self.sampler(origins, directions)
        rays, samples = points.shape[:2]
        encoded = self.grid(self.jitter(points).reshape(-1, 3))
        out = self.mlp(encoded)
        rgb = torch.sigmoid(out[:, :3]).reshape(rays, samples, 3)
        sigma = torch.relu(out[:, 3:]).reshape(rays, samples, 1)
        return self.renderer(rgb, sigma, deltas)


def build() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    """The model and its inputs (seeded, so every capture sees the same numbers)."""
    torch.manual_seed(0)
    directions = torch.nn.functional.normalize(torch.randn(RAYS, 3), dim=-1)
    return TinyNeRF(), (torch.zeros(RAYS, 3), directions)
