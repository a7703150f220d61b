"""Each model's options class (``models.options``) is exactly its constructor's keyword arguments, so an
option cannot be added to one side only; and the options load where torch is not installed."""

import dataclasses
import inspect
import subprocess
import sys

import pytest

from attnkit.config import options_class
from attnkit.names import MODEL_TABLE

# Constructor arguments that come from the data (vocabularies, classes) or from the model's name, not options.
FROM_DATA = {"vocab_size", "src_vocab_size", "target_ids", "num_classes", "hard"}
# Options that are not a constructor argument: the captioner's input size is the images' size.
NOT_ARGUMENTS = {"captioner": {"height", "width"}}


def _model_class(name):
    from attnkit.models.captioner import Captioner
    from attnkit.models.han import HAN
    from attnkit.models.rnn_seq2seq import RNNSeq2Seq
    from attnkit.models.transformer import TransformerSeq2Seq

    classes = {"rnn": RNNSeq2Seq, "transformer": TransformerSeq2Seq, "han": HAN, "captioner": Captioner}
    return classes[name.replace("hard_", "")]


@pytest.mark.parametrize("name", sorted(MODEL_TABLE))
def test_options_are_the_constructors_keyword_arguments_with_its_defaults(name):
    options = options_class(name)
    params = inspect.signature(_model_class(name).__init__).parameters
    arguments = {k: p.default for k, p in params.items() if k != "self" and k not in FROM_DATA}
    section = name.replace("hard_", "")
    fields = {f.name for f in dataclasses.fields(options)} - NOT_ARGUMENTS.get(section, set())
    assert fields == set(arguments)
    defaults = dataclasses.asdict(options())
    differ = {k: (defaults[k], arguments[k]) for k in fields if defaults[k] != arguments[k]}
    # the captioner's conv_channels default is a list in the config and a tuple in the signature
    assert all(list(a) == list(b) for a, b in differ.values() if isinstance(a, list)), differ
    assert all(isinstance(a, list) for a, _ in differ.values()), differ


def test_a_config_loads_and_checks_itself_without_torch():
    code = (
        "import sys\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is blocked')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "from attnkit.config import ConfigError, load_config\n"
        "for name in ('toy-copy', 'enfr-transformer', 'reviews-han', 'digits-captioner'):\n"
        "    load_config(name)\n"
        "try:\n"
        "    load_config('enfr-transformer', ['model.transformer.num_heads=3'])\n"
        "except ConfigError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "d_model (256) must be a multiple of num_heads (3)" in out.stdout
