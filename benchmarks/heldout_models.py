"""Held-out models for the host model: never used by the tests nor to tune the probe.

- `VanillaNeRF`: NeRF (Mildenhall et al., ECCV 2020, section 5.1 and figure 7):
  positional encoding of the position (10 frequencies) and the direction (4), an
  8 × 256 ReLU MLP with the encoded position concatenated again at the fifth layer,
  a density head, a 256-wide feature layer, and a 128-wide direction branch to RGB;
- `HashGridNeRF`: a pure-torch multi-resolution hash encoding (Müller et al.,
  Instant-NGP, SIGGRAPH 2022, section 3: L = 16 levels, F = 2 features, T = 2^19
  entries, base resolution 16, per-level growth 1.38 to about 512, the spatial hash
  of their equation 4 with primes 1, 2654435761, 805459861, trilinear interpolation
  of the 8 corners) with their small MLPs (a one-hidden-layer 64-wide density MLP
  to 16 features, a two-hidden-layer 64-wide colour MLP).

Both take a batch of rays sampled uniformly (`RAYS` × `SAMPLES` points) and end in
a volume renderer. ``build_vanilla`` and ``build_hashgrid`` are ``MODULE:FUNC``
targets for ``nerframe trace capture``; `MAP` classifies their classes.
"""

from __future__ import annotations

import itertools
import math
import os

import torch
from torch import nn

RAYS, SAMPLES = int(os.environ.get("NERFRAME_RAYS", "128")), 64
"""8,192 points per forward (128 rays, or ``$NERFRAME_RAYS``): a batch that takes about a
second on a 2-core CPU."""

MAP = """
classes:
  heldout_models.RaySampler:
    op_type: UniformSampler
    params: {B: "out[0][0]", N: "out[0][1]"}
  heldout_models.PositionalEncoding:
    op_type: RFFEncoding
    params:
      input_dim: "in[0][-1]"
      num_features: "in[0][-1] * attr.num_frequencies"
      use_sin_cos: true
    approximate: frequency encoding as a Fourier-feature encoding
  heldout_models.HashEncoding:
    op_type: HashEncoding
    params:
      input_dim: "in[0][-1]"
      num_levels: attr.num_levels
      features_per_level: attr.features_per_level
      log2_hashmap_size: attr.log2_hashmap_size
  heldout_models.NeRFMLP:
    op_type: MLP
    rule: linear_layers
  heldout_models.SmallMLP:
    op_type: MLP
    rule: linear_layers
  heldout_models.VolumeRenderer:
    op_type: RGBRenderer
    params: {B: "in[0][0]", N: "in[0][1]"}
"""


class RaySampler(nn.Module):
    """`num_samples` points per ray, evenly spaced from `near` to `far`."""

    def __init__(self, num_samples: int, near: float = 2.0, far: float = 6.0) -> None:
        super().__init__()
        self.num_samples, self.near, self.far = num_samples, near, far

    def forward(self, origins: torch.Tensor, directions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        t = torch.linspace(self.near, self.far, self.num_samples, device=origins.device)
        points = origins[:, None, :] + directions[:, None, :] * t[None, :, None]
        deltas = torch.full_like(points[..., :1], (self.far - self.near) / self.num_samples)
        return points, deltas


class PositionalEncoding(nn.Module):
    """``[x, sin(2^k π x), cos(2^k π x)]`` for k < `num_frequencies` (NeRF, equation 4)."""

    def __init__(self, num_frequencies: int) -> None:
        super().__init__()
        self.num_frequencies = num_frequencies
        self.register_buffer("scales", math.pi * 2.0 ** torch.arange(num_frequencies))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        angles = (x[..., None] * self.scales).flatten(-2)
        return torch.cat([x, torch.sin(angles), torch.cos(angles)], dim=-1)


class NeRFMLP(nn.Module):
    """NeRF's MLP: 8 × 256 with a skip at layer 5, density head, direction branch."""

    def __init__(self, position_dim: int, direction_dim: int, width: int = 256) -> None:
        super().__init__()
        self.trunk = nn.ModuleList(
            [nn.Linear(position_dim, width)]
            + [nn.Linear(width + (position_dim if i == 5 else 0), width) for i in range(1, 8)]
        )
        self.density = nn.Linear(width, 1)
        self.feature = nn.Linear(width, width)
        self.branch = nn.Linear(width + direction_dim, width // 2)
        self.rgb = nn.Linear(width // 2, 3)

    def forward(self, position: torch.Tensor, direction: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = position
        for i, layer in enumerate(self.trunk):
            if i == 5:
                h = torch.cat([h, position], dim=-1)
            h = torch.relu(layer(h))
        sigma = torch.relu(self.density(h))
        h = torch.relu(self.branch(torch.cat([self.feature(h), direction], dim=-1)))
        return torch.sigmoid(self.rgb(h)), sigma


class VolumeRenderer(nn.Module):
    """Alpha compositing along each ray (NeRF, equation 3)."""

    def forward(self, rgb: torch.Tensor, sigma: torch.Tensor, deltas: torch.Tensor) -> torch.Tensor:
        alpha = 1 - torch.exp(-sigma * deltas)
        ones = torch.ones_like(alpha[:, :1])
        transmittance = torch.cumprod(torch.cat([ones, 1 - alpha + 1e-10], dim=1), dim=1)
        weights = alpha * transmittance[:, :-1]
        return (weights * rgb).sum(dim=1)


class VanillaNeRF(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sampler = RaySampler(SAMPLES)
        self.position_encoding = PositionalEncoding(10)
        self.direction_encoding = PositionalEncoding(4)
        self.mlp = NeRFMLP(3 + 3 * 2 * 10, 3 + 3 * 2 * 4)
        self.renderer = VolumeRenderer()

    def forward(self, origins: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
        points, deltas = self.sampler(origins, directions)
        rays, samples = points.shape[:2]
        position = self.position_encoding(points.reshape(-1, 3))
        view = directions[:, None, :].expand(rays, samples, 3).reshape(-1, 3)
        rgb, sigma = self.mlp(position, self.direction_encoding(view))
        return self.renderer(rgb.reshape(rays, samples, 3), sigma.reshape(rays, samples, 1), deltas)


class HashEncoding(nn.Module):
    """Instant-NGP's multi-resolution hash encoding, in plain torch (section 3)."""

    def __init__(
        self,
        num_levels: int = 16,
        features_per_level: int = 2,
        log2_hashmap_size: int = 19,
        base_resolution: int = 16,
        growth: float = 1.38,
    ) -> None:
        super().__init__()
        self.num_levels, self.features_per_level = num_levels, features_per_level
        self.log2_hashmap_size = log2_hashmap_size
        self.resolutions = [math.floor(base_resolution * growth**i) for i in range(num_levels)]
        size = 2**log2_hashmap_size
        # Instant-NGP initialises the table uniformly in [-1e-4, 1e-4] (section 4)
        self.table = nn.Parameter((torch.rand(num_levels, size, features_per_level) * 2 - 1) * 1e-4)
        self.register_buffer("primes", torch.tensor([1, 2654435761, 805459861]))
        corners = torch.tensor([[(c >> d) & 1 for d in range(3)] for c in range(8)])
        self.register_buffer("corners", corners)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = self.table.shape[1]
        levels = []
        for level, resolution in enumerate(self.resolutions):
            scaled = x * resolution
            floor = torch.floor(scaled)
            frac = scaled - floor
            corner = floor.long()[:, None, :] + self.corners[None]  # (P, 8, 3)
            index = (corner * self.primes).sum(-1) % size  # sum for xor: see tiny_nerf
            weight = torch.where(self.corners.bool()[None], frac[:, None], 1 - frac[:, None])
            values = self.table[level][index]  # (P, 8, F): the gather
            levels.append((values * weight.prod(-1)[..., None]).sum(1))
        return torch.cat(levels, dim=-1)


class SmallMLP(nn.Module):
    """ReLU MLP with the given widths (Instant-NGP's 64-wide networks)."""

    def __init__(self, widths: list[int]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x


class HashGridNeRF(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sampler = RaySampler(SAMPLES)
        self.grid = HashEncoding()
        self.density = SmallMLP([32, 64, 16])
        self.direction_encoding = PositionalEncoding(4)
        self.color = SmallMLP([16 + 27, 64, 64, 3])
        self.renderer = VolumeRenderer()

    def forward(self, origins: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
        points, deltas = self.sampler(origins, directions)
        rays, samples = points.shape[:2]
        unit = (points.reshape(-1, 3) + 8.0) / 16.0  # the scene box [-8, 8]^3 to [0, 1]^3
        features = self.density(self.grid(unit))
        sigma = torch.exp(features[:, :1])  # Instant-NGP's density activation (section 4)
        view = directions[:, None, :].expand(rays, samples, 3).reshape(-1, 3)
        rgb = torch.sigmoid(self.color(torch.cat([features, self.direction_encoding(view)], -1)))
        return self.renderer(rgb.reshape(rays, samples, 3), sigma.reshape(rays, samples, 1), deltas)


def _rays() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    directions = nn.functional.normalize(torch.randn(RAYS, 3), dim=-1)
    return torch.zeros(RAYS, 3), directions


def build_vanilla() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    """The vanilla NeRF and its rays (seeded)."""
    rays = _rays()
    return VanillaNeRF(), rays


def build_hashgrid() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    """The hash-grid NeRF and its rays (seeded)."""
    rays = _rays()
    return HashGridNeRF(), rays
