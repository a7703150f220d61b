"""A ResNet trunk whose parameter names are torchvision's, so that torchvision's ImageNet weights
(``resnet18-*.pth``, ``resnet34-*.pth``, a plain state dict) load into it by path, read as data
(``torch.load(weights_only=True)``), without torchvision installed and without any download.

The trunk is He et al. 2016's stem (7x7/2 convolution, BatchNorm, ReLU, 3x3/2 max pool) and the
basic-block stages ``layer1..layer3`` (stride 16 in all, 256 channels); ``layer4`` and ``fc`` are not used,
as Show, Attend and Tell reads a convolutional feature map, not the classifier.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import torch
from torch import Tensor, nn

from ..errors import ConfigError

DEPTHS = {"resnet18": (2, 2, 2), "resnet34": (3, 4, 6)}  # blocks in layer1..layer3
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class BasicBlock(nn.Module):
    def __init__(self, inputs: int, outputs: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.relu = nn.ReLU()
        self.downsample: nn.Module | None = None
        if stride != 1 or inputs != outputs:
            self.downsample = nn.Sequential(
                nn.Conv2d(inputs, outputs, 1, stride, bias=False), nn.BatchNorm2d(outputs)
            )

    def forward(self, x: Tensor) -> Tensor:
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNetTrunk(nn.Module):
    """Shapes: images (B, 3, H, W), ImageNet-normalized -> features (B, 256, H / 16, W / 16)."""

    stride = 16
    channels = 256

    def __init__(self, name: str) -> None:
        super().__init__()
        if name not in DEPTHS:
            raise ConfigError(f"model.captioner.backbone: unknown {name!r}; valid: {', '.join(DEPTHS)}")
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        widths, inputs = (64, 128, 256), 64
        for index, (blocks, width) in enumerate(zip(DEPTHS[name], widths), 1):
            stride = 1 if index == 1 else 2
            stage = [
                BasicBlock(inputs if b == 0 else width, width, stride if b == 0 else 1) for b in range(blocks)
            ]
            self.add_module(f"layer{index}", nn.Sequential(*stage))
            inputs = width

    def forward(self, images: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(images))))
        for name in ("layer1", "layer2", "layer3"):
            x = self.get_submodule(name)(x)
        return x


def load_torchvision_weights(trunk: ResNetTrunk, path: str | Path) -> int:
    """Copy a torchvision ResNet state dict at ``path`` into ``trunk`` (layer4 and fc are skipped);
    returns the number of tensors loaded. A file that is not such a state dict is one ConfigError."""
    where = f"training.backbone_weights: {path}"
    try:
        with warnings.catch_warnings():  # torch's advice on pickle protocols: the error below says enough
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ConfigError(f"{where} does not exist") from None
    except Exception as exc:  # noqa: BLE001 (pickles with code, zips that are not torch files, junk)
        raise ConfigError(f"{where} is not a plain torch state dict ({type(exc).__name__})") from None
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise ConfigError(f"{where} holds a {type(state).__name__}, not a state dict")
    wanted = trunk.state_dict()
    used = {k: v for k, v in state.items() if k in wanted}
    missing = sorted(set(wanted) - set(used))
    if missing:
        raise ConfigError(f"{where} is not a torchvision ResNet of this depth (no {missing[0]!r})")
    for key, value in used.items():
        if not isinstance(value, Tensor) or value.shape != wanted[key].shape:
            shape = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
            raise ConfigError(f"{where}: {key} is {shape}, the trunk wants {tuple(wanted[key].shape)}")
    trunk.load_state_dict(used)
    return len(used)


class BackboneEncoder(nn.Module):
    """The encoder interface of ``captioner.ConvEncoder`` over a ResNet trunk: images (B, C, H, W) in
    [0, 1] (grayscale is repeated to RGB) -> annotations (B, h * w, 256 + 2) with the cells' coordinates."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.trunk = ResNetTrunk(name)
        self.out_size = ResNetTrunk.channels + 2
        self.downsample = ResNetTrunk.stride
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1), persistent=False)

    def grid(self, size: tuple[int, int]) -> tuple[int, int]:
        return -(-size[0] // self.downsample), -(-size[1] // self.downsample)

    def forward(self, images: Tensor) -> tuple[Tensor, tuple[int, int]]:
        rgb = images.expand(-1, 3, -1, -1) if images.shape[1] == 1 else images
        mean, std = self.get_buffer("mean"), self.get_buffer("std")
        return with_coordinates(self.trunk((rgb - mean) / std))


def with_coordinates(grid: Tensor) -> tuple[Tensor, tuple[int, int]]:
    """A feature map (B, D, h, w) -> annotation vectors (B, h * w, D + 2), each with its cell's (row,
    column) in [-1, 1], and the grid (h, w)."""
    batch, _, h, w = grid.shape
    ys = torch.linspace(-1.0, 1.0, h, device=grid.device).view(1, 1, h, 1).expand(batch, 1, h, w)
    xs = torch.linspace(-1.0, 1.0, w, device=grid.device).view(1, 1, 1, w).expand(batch, 1, h, w)
    return torch.cat([grid, ys, xs], 1).flatten(2).transpose(1, 2), (h, w)
