"""Training end to end on the toy config: learning, resume after a kill, Ctrl-C, DDP, checkpoints."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from attnkit.checkpoint import load_checkpoint, step_checkpoints
from attnkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
TOY = str(ROOT / "configs" / "toy-copy.yaml")


def _sets(out: Path, **extra: object) -> list[str]:
    values = {
        "training.out_dir": str(out),
        "training.progress": False,
        "data.train": f"[{ROOT}/src/attnkit/configs/toy_copy.tsv]",
        "data.dev": f"[{ROOT}/src/attnkit/configs/toy_copy_dev.tsv]",
        **extra,
    }
    return [x for k, v in values.items() for x in ("--set", f"{k}={v}")]


def _cli(out: Path, *flags: str, **extra: object) -> list[str]:
    return [sys.executable, "-m", "attnkit", "train", TOY, *_sets(out, **extra), *flags]


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(path).model


def test_without_a_progress_bar_the_log_gets_a_line_every_log_every_steps(tmp_path, capsys):
    extra = {"training.max_steps": 6, "training.validate_every": 0, "training.log_every": 3}
    assert main(["train", TOY, *_sets(tmp_path, **extra)]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [line.removeprefix("[attnkit] ") for line in err if line.startswith("[attnkit] step ")]
    assert [line.split()[1] for line in lines] == ["3", "6"]
    assert all(" loss " in line and " tokens/s " in line and " lr " in line for line in lines)


def test_toy_run_learns_and_writes_checkpoints(tmp_path):
    extra = {"training.max_steps": 100, "training.validate_every": 50, "training.snapshot_minutes": "[0.001]"}
    assert main(["train", TOY, *_sets(tmp_path, **extra)]) == 0
    assert load_checkpoint(tmp_path / "minutes-0.001.pt").step < 100  # the equal-budget snapshot
    ckpt = load_checkpoint(tmp_path / "best.pt")
    assert ckpt.attnkit_version and ckpt.tokenizer and ckpt.config.name == "toy-copy"
    history = ckpt.position["history"]
    uniform = __import__("math").log(len(ckpt.target_ids))  # dev loss of a model that learned nothing
    assert history[-1]["dev_loss"] < 1.0 < uniform and history[-1]["dev_loss"] <= history[0]["dev_loss"]
    assert (tmp_path / "validations.csv").read_text().startswith("dev_loss,")
    assert not list(tmp_path.glob(".*tmp*"))  # no temporary files left behind


def test_separate_vocabularies_train_save_and_translate(tmp_path):
    from attnkit.translator import Translator

    extra = {"training.max_steps": 60, "training.validate_every": 60, "data.vocabulary": "separate"}
    assert main(["train", TOY, *_sets(tmp_path, **extra)]) == 0
    ckpt = load_checkpoint(tmp_path / "best.pt")
    assert ckpt.target_tokenizer and ckpt.tokenizer
    assert "src_embedding.weight" in ckpt.model
    translator = Translator.from_checkpoint(tmp_path / "best.pt")
    assert translator.tokenizer is not translator.target_tokenizer
    result = translator.translate(["a b c"], beam=2)[0]
    assert result.attention.shape == (len(result.target_tokens), len(result.source_tokens))


def test_unknown_vocabulary_kind_lists_the_valid_ones(tmp_path):
    from attnkit.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="data.vocabulary.*valid: joint, separate"):
        load_config(TOY, ["data.vocabulary=shared"])


@pytest.mark.slow  # subprocess training runs: in CI's slow pass (make test-slow)
def test_resume_after_kill_reaches_the_same_state(tmp_path):
    steps = {"training.max_steps": 60, "training.checkpoint_every": 10, "training.validate_every": 0}
    full = tmp_path / "full"
    subprocess.run(_cli(full, **steps), check=True, capture_output=True, cwd=ROOT)
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        _cli(killed, **steps), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 120
    while not (killed / "step-20.pt").exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    survivors = step_checkpoints(killed)
    assert survivors and int(survivors[-1].stem.split("-")[1]) < 60, "the run finished before it was killed"
    subprocess.run(_cli(killed, "--resume", **steps), check=True, capture_output=True, cwd=ROOT)
    a, b = _weights(full / "step-60.pt"), _weights(killed / "step-60.pt")
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=1e-6, msg=name)


@pytest.mark.slow
def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly(tmp_path):
    proc = subprocess.Popen(
        _cli(tmp_path, **{"training.max_steps": 100000, "training.validate_every": 0}),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.5)
        if "parameters" in (proc.stderr.readline() if proc.stderr else ""):
            break
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    saved = step_checkpoints(tmp_path)
    assert saved and load_checkpoint(saved[-1]).step > 0


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs process spawning")
def test_ddp_two_processes_match_one_process(tmp_path):
    steps = {"training.max_steps": 6, "training.validate_every": 0, "training.validate_bleu": False}
    single = tmp_path / "single"
    subprocess.run(_cli(single, **steps), check=True, capture_output=True, cwd=ROOT)
    ddp = tmp_path / "ddp"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        "--master_port=29531",
        "-m",
        "attnkit",
        "train",
        TOY,
        *_sets(ddp, **steps),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr[:3000] + " ... " + result.stderr[-1000:]  # the cause first
    a, b = _weights(single / "step-6.pt"), _weights(ddp / "step-6.pt")
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-4, atol=2e-5, msg=name)


def test_init_from_starts_a_new_run_from_trained_weights(tmp_path):
    first = tmp_path / "first"
    steps = {"training.max_steps": 30, "training.validate_every": 30}
    assert main(["train", TOY, *_sets(first, **steps)]) == 0
    second = tmp_path / "second"
    extra = {"training.max_steps": 1, "training.validate_every": 1, "training.lr": 0.0}
    init = {"training.init_from": str(first / "best.pt")}
    assert main(["train", TOY, *_sets(second, **extra, **init)]) == 0
    start, after = load_checkpoint(first / "best.pt"), load_checkpoint(second / "best.pt")
    assert after.step == 1 and after.tokenizer == start.tokenizer
    for name, weight in start.model.items():  # lr 0: one step leaves the loaded weights as they were
        torch.testing.assert_close(after.model[name], weight, msg=name)


def test_init_from_another_architecture_names_the_difference(tmp_path, capsys):
    first = tmp_path / "first"
    assert main(["train", TOY, *_sets(first, **{"training.max_steps": 2, "training.validate_every": 2})]) == 0
    other = {"training.init_from": str(first / "best.pt"), "model.rnn.hidden_size": 16}
    assert main(["train", TOY, *_sets(tmp_path / "second", **other)]) == 2
    assert "model.hidden_size: 32 there, 16 here" in capsys.readouterr().err


def test_subword_sampling_trains_with_new_pieces_each_epoch(tmp_path):
    from attnkit.config import load_config
    from attnkit.training.translation import TranslationTask

    config = load_config(TOY, [s for s in _sets(tmp_path) if s != "--set"] + ["data.subword_alpha=0.1"])
    task = TranslationTask(config, log=lambda message: None)
    epoch0, epoch1 = task.epoch_batcher(0), task.epoch_batcher(1)
    assert epoch0.src != epoch1.src and task.epoch_batcher(0).src == epoch0.src
    assert epoch0.src != task.batcher.src  # not the fixed segmentation
    sampled = {"data.subword_alpha": 0.1, "training.max_steps": 20}
    assert main(["train", TOY, *_sets(tmp_path, **sampled)]) == 0


def test_han_trains_with_the_same_trainer_and_keeps_its_class_weights(tmp_path):
    from attnkit.classifier import Classifier
    from tests.helpers import tiny_han_run

    args = tiny_han_run(
        tmp_path,
        **{
            "training.out_dir": str(tmp_path / "run"),
            "training.max_steps": 30,
            "training.validate_every": 15,
            "training.word2vec_epochs": 0,
        },
    )
    assert main(["train", str(ROOT / "configs" / "reviews-han.yaml"), *args]) == 0
    ckpt = load_checkpoint(tmp_path / "run" / "best.pt")
    counts = {"1": 10, "3": 10, "5": 20}  # sqrt_inverse: sqrt(n / (C * count))
    assert ckpt.class_weights == pytest.approx([(40 / (3 * counts[c])) ** 0.5 for c in ckpt.labels])
    path = tmp_path / "run" / "best.pt"
    plain = Classifier.from_checkpoint(path, prior_correction=0.0).classify(["Love it."])[0].probabilities
    fixed = Classifier.from_checkpoint(path, prior_correction=1.0).classify(["Love it."])[0].probabilities
    weight = dict(zip(ckpt.labels, ckpt.class_weights))  # tau = 1 divides the class weights out
    unnormalised = {c: plain[c] / weight[c] for c in plain}
    total = sum(unnormalised.values())
    assert fixed == pytest.approx({c: v / total for c, v in unnormalised.items()}, abs=1e-5)


def test_python_api_trains_and_resumes_to_the_same_weights_as_one_run(tmp_path):
    import attnkit
    from attnkit.config import load_config

    def config(out: Path, steps: int):
        sets = _sets(out, **{"training.max_steps": steps, "training.validate_every": 10})
        return load_config(TOY, [s for s in sets if s != "--set"])

    assert attnkit.train(config(tmp_path / "whole", 20)) == "max_steps"
    assert attnkit.train(config(tmp_path / "split", 10)) == "max_steps"
    assert attnkit.train(config(tmp_path / "split", 20), resume=True) == "max_steps"
    whole, split = _weights(tmp_path / "whole" / "step-20.pt"), _weights(tmp_path / "split" / "step-20.pt")
    assert whole.keys() == split.keys()
    assert all(torch.allclose(whole[k], split[k], atol=1e-6) for k in whole)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_classification_loss_applies_label_smoothing(smoothing):
    """training.label_smoothing reaches the HAN's loss (it used to be ignored for classification):
    the summed loss equals cross-entropy against (1 - e) one-hot + e / C targets."""
    import torch.nn.functional as F

    from attnkit.config import ExperimentConfig
    from attnkit.data.documents import Vocabulary, document_from_text, make_document_batch
    from attnkit.models import build_model
    from attnkit.training.classification import ClassificationTask

    docs = [document_from_text(t, label) for t, label in [("love it. great", 4), ("bad fabric", 0)]]
    vocab = Vocabulary.build(docs, min_freq=1)
    config = ExperimentConfig(name="tiny-han", task="classification")
    config.model.name, config.training.label_smoothing = "han", smoothing
    config.model.han.embed_size, config.model.han.word_hidden, config.model.han.sentence_hidden = 8, 4, 4
    torch.manual_seed(0)
    model = build_model(config.model, len(vocab), num_classes=5).eval()
    task = ClassificationTask.__new__(ClassificationTask)
    task.config, task.weights = config, None
    batch = make_document_batch(docs, vocab)
    with torch.no_grad():
        loss, units, _ = task.loss(model, batch)
        log_p = F.log_softmax(model(batch.words, batch.word_mask).logits, -1)
    target = torch.full_like(log_p, smoothing / 5).scatter_(
        1, batch.labels[:, None], 1 - smoothing + smoothing / 5
    )
    assert units == 2
    assert float(loss) == pytest.approx(float(-(target * log_p).sum()), rel=1e-5)
