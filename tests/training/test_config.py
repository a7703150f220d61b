"""Strict typed config: unknown keys and wrong types are errors naming them; --set overrides."""

from pathlib import Path

import pytest
import torch

from attnkit.config import ConfigError, load_config
from attnkit.training.schedule import Schedule, linear_factor, warmup_factor

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "src" / "attnkit" / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_shipped_config_loads(path):
    config = load_config(path)
    assert config.name == path.stem


def test_unknown_key_names_it_and_lists_valid_keys(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("training:\n  learning_rate: 0.1\n")
    with pytest.raises(
        ConfigError, match=r"unknown config key 'training.learning_rate'; valid keys here: .*lr"
    ):
        load_config(path)


def test_wrong_type_and_unknown_choice(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("training:\n  max_steps: many\n")
    with pytest.raises(ConfigError, match="training.max_steps: expected int"):
        load_config(path)
    with pytest.raises(
        ConfigError,
        match="model.name: unknown value 'lstm'; valid: captioner, han, hard_captioner, rnn, transformer",
    ):
        load_config(None, ["model.name=lstm"])
    with pytest.raises(
        ConfigError, match="model.name: 'han' is not a translation model; valid: rnn, transformer"
    ):
        load_config(None, ["model.name=han"])


def test_overrides_are_parsed_and_checked():
    config = load_config(None, ["training.lr=0.5", "model.rnn.scorer=general", "data.train=[a.tsv]"])
    assert (
        config.training.lr == 0.5 and config.model.rnn.scorer == "general" and config.data.train == ["a.tsv"]
    )
    with pytest.raises(ConfigError, match="expects key=value"):
        load_config(None, ["training.lr"])


def test_warmup_then_inverse_sqrt():
    assert warmup_factor(50, 100, True) == 0.5
    assert warmup_factor(100, 100, True) == 1.0
    assert warmup_factor(400, 100, True) == 0.5
    assert warmup_factor(400, 100, False) == 1.0


def test_linear_warms_up_then_decays_to_zero_at_max_steps():
    assert [linear_factor(s, 10, 110) for s in (5, 10, 60, 110, 200)] == [0.5, 1.0, 0.5, 0.0, 0.0]
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.2)
    schedule = Schedule(optimizer, "linear", warmup=0, total=4)
    lrs = [schedule.lr]
    for _ in range(4):
        schedule.step()
        lrs.append(schedule.lr)
    assert lrs == pytest.approx([0.15, 0.1, 0.05, 0.0, 0.0])


def test_linear_schedule_needs_max_steps():
    with pytest.raises(ConfigError, match="max_steps"):
        load_config(None, ["training.schedule=linear"])
    assert load_config(None, ["training.schedule=linear", "training.max_steps=10"]).training.max_steps == 10


def test_shipped_configs_load_by_name_from_any_folder(tmp_path, monkeypatch):
    """After a pip install there is no configs/ folder: names resolve to the package's copies, and their
    data files resolve against the config's own folder, not the current one."""
    monkeypatch.chdir(tmp_path)
    config = load_config("toy-copy")
    assert config.name == "toy-copy"
    assert all(Path(f).is_file() for f in config.data.train + config.data.dev)
    with pytest.raises(ConfigError, match="no shipped config of that name: .*toy-copy"):
        load_config("toy-cpy")


def test_data_paths_resolve_against_the_config_file_and_set_paths_as_given(tmp_path, monkeypatch):
    folder = tmp_path / "experiment"
    folder.mkdir()
    (folder / "exp.yaml").write_text("name: exp\ndata:\n  train: [pairs.tsv]\n  dev: [/abs/dev.tsv]\n")
    monkeypatch.chdir(tmp_path)
    config = load_config("experiment/exp.yaml", ["data.dev=[here.tsv]"])
    assert config.data.train == [str(folder / "pairs.tsv")]
    assert config.data.dev == ["here.tsv"]
    assert load_config(folder / "exp.yaml").data.dev == ["/abs/dev.tsv"]


def test_a_model_config_holds_its_own_options_only(tmp_path):
    from attnkit.config import ModelConfig, to_dict
    from attnkit.models.options import RNNConfig, TransformerConfig

    config = load_config("toy-copy", ["model.rnn.hidden_size=48"])
    assert isinstance(config.model.options, RNNConfig) and config.model.rnn.hidden_size == 48
    assert to_dict(config)["model"] == {"name": "rnn", "rnn": to_dict(config)["model"]["rnn"]}
    with pytest.raises(AttributeError, match="configured by model.rnn, not model.transformer"):
        _ = config.model.transformer
    config.model.name = "transformer"  # another model: its own options, at their defaults
    assert config.model.options == TransformerConfig() and config.model.transformer.d_model == 256
    config.model.transformer.d_model = 64
    config.model.name = "transformer"  # the same model keeps its options
    assert config.model.options.d_model == 64
    captioner = ModelConfig("captioner")
    captioner.captioner.hidden_size = 32
    captioner.name = "hard_captioner"  # hard attention reads the captioner's section
    assert captioner.section == "captioner" and captioner.options.hidden_size == 32
    with pytest.raises(ConfigError, match="model.transformer: the rnn model reads model.rnn only"):
        load_config("toy-copy", ["model.transformer.d_model=512"])
    with pytest.raises(
        ConfigError, match=r"model.transformer.d_model \(256\) must be a multiple of num_heads"
    ):
        load_config("tatoeba-transformer", ["model.transformer.num_heads=3"])
    with pytest.raises(ConfigError, match=r"^model.rnn: expected a mapping, got \[1\]$"):
        load_config("toy-copy", ["model.rnn=[1]"])
    with pytest.raises(ConfigError, match=r"^training: expected a mapping, got 5$"):
        load_config("toy-copy", ["training=5"])
    with pytest.raises(ConfigError, match=r"model.han.dropout must be in \[0, 1\), got 1.5"):
        load_config("reviews-han", ["model.han.dropout=1.5"])


def test_training_options_given_in_their_0_1_place_move_to_training(tmp_path, caplog):
    path = tmp_path / "old.yaml"
    path.write_text(
        "task: classification\nmodel:\n  name: han\n  han:\n    embed_size: 8\n    class_weighting: inverse\n"
    )
    with caplog.at_level("WARNING", logger="attnkit"):
        config = load_config(path, ["model.han.word2vec_epochs=2"])
    assert config.training.class_weighting == "inverse" and config.training.word2vec_epochs == 2
    assert config.model.han.embed_size == 8 and not hasattr(config.model.han, "class_weighting")
    assert "model.han.class_weighting -> training.class_weighting" in caplog.text
    with pytest.raises(ConfigError, match="model.han.class_weighting is training.class_weighting now"):
        load_config(path, ["training.class_weighting=none"])
