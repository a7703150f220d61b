import os
import shutil

import torch

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))

import pytest  # noqa: E402

from attnkit.config import ExperimentConfig, to_dict  # noqa: E402

FIXTURES = __import__("pathlib").Path(__file__).parents[1] / "src" / "attnkit" / "configs"  # toy data


def _save(path, config, model, **extra):
    from attnkit import __version__
    from attnkit.checkpoint import save_payload

    save_payload(
        {
            "attnkit_version": __version__,
            "config": to_dict(config),
            "step": 0,
            "model": model.state_dict(),
            **extra,
        },
        path,
    )
    return path


@pytest.fixture(scope="session")
def translator_ckpt(tmp_path_factory):
    """An untrained tiny RNN translator checkpoint with a real sentencepiece model (fast to build)."""
    from attnkit.data.parallel import read_parallel
    from attnkit.data.tokenizer import SubwordTokenizer
    from attnkit.models import build_model

    src, tgt = read_parallel(FIXTURES / "toy_copy.tsv")
    tok = SubwordTokenizer.train(src + tgt + ["The cat sits on the mat."] * 5, vocab_size=60)
    config = ExperimentConfig(name="tiny")
    config.data.train = [str(FIXTURES / "toy_copy.tsv")]  # what its tokenizer saw (no language pair)
    config.model.rnn.embed_size = config.model.rnn.hidden_size = 16
    torch.manual_seed(0)
    model = build_model(config.model, len(tok))
    return _save(
        tmp_path_factory.mktemp("tr") / "model.pt",
        config,
        model,
        tokenizer=tok.model_proto,
        target_ids=list(range(len(tok))),
    )


@pytest.fixture(scope="session")
def transformer_ckpt(tmp_path_factory, translator_ckpt):
    from attnkit.checkpoint import load_checkpoint
    from attnkit.data.tokenizer import SubwordTokenizer
    from attnkit.models import build_model

    tok = SubwordTokenizer(load_checkpoint(translator_ckpt).tokenizer)
    config = ExperimentConfig(name="tiny-transformer")
    config.data.train = [str(FIXTURES / "toy_copy.tsv")]
    config.model.name = "transformer"
    t = config.model.transformer
    t.d_model, t.num_heads, t.ff_size, t.encoder_layers, t.decoder_layers = 16, 2, 32, 2, 2
    torch.manual_seed(0)
    model = build_model(config.model, len(tok))
    return _save(
        tmp_path_factory.mktemp("tf") / "model.pt",
        config,
        model,
        tokenizer=tok.model_proto,
        target_ids=list(range(len(tok))),
    )


@pytest.fixture(scope="session")
def classifier_ckpt(tmp_path_factory):
    from attnkit.data.documents import Vocabulary, document_from_text
    from attnkit.models import build_model

    docs = [document_from_text(t) for t in ["love it great fit", "terrible fabric ripped", "ok i guess"]]
    vocab = Vocabulary.build(docs, min_freq=1)
    config = ExperimentConfig(name="tiny-han", task="classification")
    config.model.name = "han"
    config.model.han.embed_size, config.model.han.word_hidden, config.model.han.sentence_hidden = 8, 4, 4
    torch.manual_seed(0)
    model = build_model(config.model, len(vocab), num_classes=5)
    return _save(
        tmp_path_factory.mktemp("han") / "model.pt",
        config,
        model,
        vocabulary=vocab.words,
        labels=["1", "2", "3", "4", "5"],
    )


@pytest.fixture(scope="session")
def captioner_ckpt(tmp_path_factory):
    """An untrained tiny captioner (Show, Attend and Tell) over the digit strings' 48 x 192 canvas."""
    from attnkit.datasets.digits import WORDS
    from attnkit.models import build_model

    config = ExperimentConfig(name="tiny-captioner", task="captioning")
    config.data.dataset = "digits"
    config.data.max_len = 8
    config.model.name = "captioner"
    c = config.model.captioner
    c.conv_channels, c.embed_size, c.hidden_size, c.attention_size = [4, 8], 8, 16, 8
    words = ["<unk>", "<pad>", "<s>", "</s>", *WORDS]
    torch.manual_seed(0)
    model = build_model(config.model, len(words))
    return _save(tmp_path_factory.mktemp("cap") / "model.pt", config, model, vocabulary=words)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (Debian's ``chromium``) driven by Playwright, one per test module (its event loop
    must not outlive the module: other tests run asyncio in this thread)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        launched = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()
