"""A ResNet backbone from torchvision's weights by path: its parameter names are torchvision's, the file is
read as data, and a captioner built on it captions and exports like the small CNN."""

from __future__ import annotations

import pickle

import pytest
import torch

from attnkit.config import load_config
from attnkit.errors import ConfigError
from attnkit.models import build_model
from attnkit.models.backbones import ResNetTrunk, load_torchvision_weights

# A sample of torchvision's resnet18 state-dict names (torchvision/models/resnet.py), which its released
# ImageNet files use; the trunk must hold every one below layer4.
TORCHVISION_NAMES = [
    "conv1.weight",
    "bn1.running_var",
    "layer1.0.conv1.weight",
    "layer1.1.bn2.bias",
    "layer2.0.downsample.0.weight",
    "layer2.0.downsample.1.num_batches_tracked",
    "layer3.1.conv2.weight",
]


def _torchvision_like_file(path, depth="resnet18"):
    """A state dict with torchvision's names and shapes (random values), plus layer4 and fc it may carry."""
    torch.manual_seed(3)
    state = {k: torch.randn_like(v.float()).to(v.dtype) for k, v in ResNetTrunk(depth).state_dict().items()}
    state["layer4.0.conv1.weight"] = torch.zeros(512, 256, 3, 3)
    state["fc.weight"] = torch.zeros(1000, 512)
    torch.save(state, path)
    return state


def test_trunk_uses_torchvision_names_and_stride_16():
    trunk = ResNetTrunk("resnet18")
    names = set(trunk.state_dict())
    assert set(TORCHVISION_NAMES) <= names and not any(n.startswith(("layer4", "fc")) for n in names)
    assert trunk(torch.rand(2, 3, 48, 192)).shape == (2, 256, 3, 12)
    assert (
        len([n for n in ResNetTrunk("resnet34").state_dict() if n.endswith("conv1.weight")]) == 1 + 3 + 4 + 6
    )


def test_weights_load_by_path_and_train_from_there(tmp_path):
    state = _torchvision_like_file(tmp_path / "resnet18.pth")
    sets = [
        "model.captioner.backbone=resnet18",
        f"training.backbone_weights={tmp_path / 'resnet18.pth'}",
        "model.captioner.hidden_size=16",
        "model.captioner.embed_size=8",
        "model.captioner.attention_size=8",
        "data.dev_images=4",
        "data.images_per_epoch=8",
        "data.batch_images=4",
        "training.max_steps=1",
        "training.lr=0",
        "training.validate_every=1",
        f"training.out_dir={tmp_path / 'run'}",
    ]
    from attnkit.api import train
    from attnkit.captioner import Captioner

    assert train(load_config("digits-captioner", sets)) == "max_steps"
    captioner = Captioner.from_checkpoint(tmp_path / "run" / "best.pt")
    trunk = captioner.model.encoder.trunk
    assert torch.equal(trunk.layer3[1].conv2.weight, state["layer3.1.conv2.weight"])  # lr 0: as loaded
    assert captioner.grid == (3, 12)
    result = captioner.caption_arrays(torch.rand(1, 1, 48, 192).numpy())[0]
    assert result.attention.shape[1:] == (3, 12)


def test_a_file_that_is_not_such_a_state_dict_is_one_clear_error(tmp_path):
    trunk = ResNetTrunk("resnet18")
    with pytest.raises(ConfigError, match="does not exist"):
        load_torchvision_weights(trunk, tmp_path / "missing.pth")
    (tmp_path / "evil.pth").write_bytes(pickle.dumps(print))
    with pytest.raises(ConfigError, match="not a plain torch state dict"):
        load_torchvision_weights(trunk, tmp_path / "evil.pth")
    _torchvision_like_file(tmp_path / "resnet18.pth", "resnet18")
    with pytest.raises(ConfigError, match="not a torchvision ResNet of this depth"):
        load_torchvision_weights(ResNetTrunk("resnet34"), tmp_path / "resnet18.pth")  # no layer1.2
    state = torch.load(tmp_path / "resnet18.pth", weights_only=True)
    state["conv1.weight"] = torch.zeros(64, 1, 7, 7)
    torch.save(state, tmp_path / "gray.pth")
    with pytest.raises(ConfigError, match=r"conv1.weight is \(64, 1, 7, 7\)"):
        load_torchvision_weights(trunk, tmp_path / "gray.pth")
    with pytest.raises(ConfigError, match="needs model.captioner.backbone"):
        load_config("digits-captioner", ["training.backbone_weights=x.pth"])
    with pytest.raises(ConfigError, match="unknown 'vgg16'"):
        load_config("digits-captioner", ["model.captioner.backbone=vgg16"])


def test_backbone_captioner_exports_to_onnx_equal_to_torch(tmp_path):
    from attnkit.export import export
    from attnkit.runtime import load_export

    config = load_config(
        "digits-captioner", ["model.captioner.backbone=resnet18", "model.captioner.hidden_size=16"]
    )
    words = ["<unk>", "<pad>", "<s>", "</s>", "one", "two"]
    torch.manual_seed(0)
    model = build_model(config.model, len(words))
    from tests.conftest import _save

    path = _save(tmp_path / "model.pt", config, model, vocabulary=words)
    export(path, tmp_path / "onnx")
    from attnkit.captioner import Captioner

    images = torch.rand(2, 1, 48, 192).numpy()
    a = Captioner.from_checkpoint(path).caption_arrays(images, beam_size=2)
    b = load_export(tmp_path / "onnx").caption_arrays(images, beam_size=2)
    for x, y in zip(a, b):
        assert x.tokens == y.tokens
        assert abs(x.attention - y.attention).max() < 1e-4
