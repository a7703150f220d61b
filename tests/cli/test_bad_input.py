"""Bad input from a user is one clear line and exit 2; nothing the user has is lost; a bug keeps its
traceback. One test per defect class found by trying the CLI as a new user and as an attacker would."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnkit.cli.main import main
from attnkit.errors import AttnkitError, ConfigError, DataError, UsageError

ROOT = Path(__file__).resolve().parents[2]
TOY = str(ROOT / "configs" / "toy-copy.yaml")


def _one_line_error(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    # a warning before the error is one line of its own (here: --trust-pickle says what it allows)
    lines = [line for line in err.strip().splitlines() if line.strip() and "] warning: " not in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _train_args(out: Path, *extra: str) -> list[str]:
    return [
        "train",
        TOY,
        "--set",
        f"training.out_dir={out}",
        "--set",
        "training.progress=false",
        "--set",
        f"data.train=[{ROOT}/src/attnkit/configs/toy_copy.tsv]",
        "--set",
        f"data.dev=[{ROOT}/src/attnkit/configs/toy_copy_dev.tsv]",
        *extra,
    ]


def test_user_errors_are_one_type_and_still_value_errors():
    for cls in (UsageError, ConfigError, DataError):
        assert issubclass(cls, AttnkitError) and issubclass(cls, ValueError)


def test_evaluate_output_equal_to_src_is_refused_and_the_source_kept(translator_ckpt, tmp_path, capsys):
    src = tmp_path / "src.txt"
    src.write_text("ab cd\nef\n")
    ref = tmp_path / "ref.txt"
    ref.write_text("ab cd\nef\n")
    args = ["evaluate", "--model", str(translator_ckpt), "--src", str(src), "--ref", str(ref)]
    assert main([*args, "--output", str(src)]) == 2
    _one_line_error(capsys, "--output", "--src")
    assert src.read_text() == "ab cd\nef\n"


def test_average_out_equal_to_an_input_is_refused(translator_ckpt, tmp_path, capsys):
    copy = tmp_path / "step-2.pt"
    copy.write_bytes(Path(translator_ckpt).read_bytes())
    before = copy.read_bytes()
    assert main(["average", str(translator_ckpt), str(copy), "--out", str(copy)]) == 2
    _one_line_error(capsys, "--out", "input 2")
    assert copy.read_bytes() == before


def test_train_into_a_run_folder_needs_resume_or_overwrite(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_train_args(out, "--set", "training.max_steps=2", "--set", "training.validate_every=2")) == 0
    best = (out / "best.pt").read_bytes()
    capsys.readouterr()
    assert main(_train_args(out, "--set", "training.max_steps=2")) == 2
    _one_line_error(capsys, "already holds a run", "--resume", "--overwrite")
    assert (out / "best.pt").read_bytes() == best
    again = _train_args(out, "--set", "training.max_steps=2", "--set", "training.validate_every=2")
    assert main([*again, "--overwrite"]) == 0
    assert (out / "best.pt").exists()
    assert main([*again, "--overwrite", "--resume"]) == 2


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (bytes(range(128, 256)) * 3 + b"\n", "stdin:1: not UTF-8"),
        ("ça va\nvoilà l'été\n".encode("latin-1"), "stdin:1: not UTF-8"),
        (b"ok\nnul\x00byte\n", "stdin:2: holds a NUL"),
    ],
)
def test_translate_and_classify_refuse_bytes_that_are_not_text(data, needle, tmp_path):
    for command in ("translate", "classify"):
        done = subprocess.run(
            [sys.executable, "-m", "attnkit", command], input=data, capture_output=True, timeout=120
        )
        err = done.stderr.decode()
        assert done.returncode == 2 and needle in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1


def test_python_api_refuses_lone_surrogates(translator_ckpt):
    from attnkit.api import load_translator

    with pytest.raises(DataError, match="sentence 2 is not valid Unicode"):
        load_translator(str(translator_ckpt)).translate(["ab", "a \udcff"])


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "the config is empty"),
        (
            "training:\n  lr: 0.1\ntraining:\n  max_steps: 3\n",
            ":3: key 'training' given twice (first on line 1)",
        ),
    ],
)
def test_configs_that_would_run_something_else_are_refused(text, needle, tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(text)
    assert main(["train", str(config)]) == 2
    _one_line_error(capsys, needle, str(config))


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("data.vocab_size=-3", "data.vocab_size must be > 0"),
        ("training.max_steps=-5", "training.max_steps must be >= 0"),
        ("model.rnn.hidden_size=0", "model.rnn.hidden_size must be > 0"),
        ("data.max_tokens=0", "data.max_tokens must be > 0"),
        ("training.log_every=0", "training.log_every must be > 0"),
        ("model.rnn.dropout=1.5", "model.rnn.dropout must be in [0, 1)"),
        ("model.transformer.num_heads=3", "model.transformer: the rnn model reads model.rnn only"),
    ],
)
def test_config_values_out_of_range_name_the_field(override, needle, tmp_path, capsys):
    assert main(_train_args(tmp_path / "run", "--set", override)) == 2
    _one_line_error(capsys, needle)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("beam", ["0", "-1"])
def test_evaluate_beam_must_be_positive(translator_ckpt, tmp_path, capsys, beam):
    src = tmp_path / "s.txt"
    src.write_text("ab\n")
    args = ["evaluate", "--model", str(translator_ckpt), "--src", str(src), "--ref", str(src)]
    assert main([*args, "--beam", beam]) == 2
    _one_line_error(capsys, "--beam must be >= 1")


def test_empty_evaluation_files_are_refused(translator_ckpt, classifier_ckpt, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    args = ["evaluate", "--model", str(translator_ckpt), "--src", str(empty), "--ref", str(empty)]
    assert main(args) == 2
    _one_line_error(capsys, "no sentences")
    data = tmp_path / "empty.jsonl"
    data.write_text("")
    assert main(["evaluate-classifier", "--model", str(classifier_ckpt), "--data", str(data)]) == 2
    _one_line_error(capsys, "no documents")


def test_export_out_an_existing_file_is_refused(translator_ckpt, tmp_path, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    assert main(["export", str(translator_ckpt), "--out", str(target)]) == 2
    _one_line_error(capsys, "is a file")
    assert target.read_text() == "mine"


def test_convert_trust_pickle_on_random_bytes_is_a_clear_error(tmp_path, capsys):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(os.urandom(4096))
    assert main(["convert", str(junk), str(tmp_path / "new.pt"), "--trust-pickle"]) == 2
    _one_line_error(capsys, "not an attnkit checkpoint")
    assert main(["convert", str(junk), str(junk)]) == 2
    _one_line_error(capsys, "would replace the input")


def test_convert_trust_pickle_on_bytes_whose_unpickling_fails_its_own_cleanup_is_one_line(tmp_path, capsys):
    """4 KB of random bytes (kept as found by fuzzing) on which unpickling runs out of memory and CPython
    then reports a failed cleanup through sys.unraisablehook: still one line, no traceback."""
    from pathlib import Path

    junk = Path(__file__).parents[1] / "fixtures" / "pickle-memory-error.pt"
    assert main(["convert", str(junk), str(tmp_path / "new.pt"), "--trust-pickle"]) == 2
    _one_line_error(capsys, "not an attnkit checkpoint (unreadable: ")


def test_align_refuses_gold_links_outside_the_sentences_and_empty_gold(translator_ckpt, tmp_path, capsys):
    src, tgt, gold = tmp_path / "s", tmp_path / "t", tmp_path / "g"
    src.write_text("ab cd\n")
    tgt.write_text("ab\n")
    args = [
        "align",
        "--model",
        str(translator_ckpt),
        "--src",
        str(src),
        "--tgt",
        str(tgt),
        "--gold",
        str(gold),
    ]
    gold.write_text("1 3 1\n")
    assert main(args) == 2
    _one_line_error(capsys, f"{gold}:1", "outside sentence 1")
    gold.write_text("\n")
    assert main(args) == 2
    _one_line_error(capsys, "no links")


def test_a_bug_keeps_its_traceback(monkeypatch):
    from attnkit.cli import cmd_list

    def broken(args):
        raise ValueError("a bug deep inside, not the user's doing")

    monkeypatch.setattr(cmd_list, "run", broken)  # add_parser binds the module's run when main builds it
    with pytest.raises(ValueError, match="a bug deep inside"):
        main(["list"])


def test_debug_shows_the_traceback_of_a_user_error(tmp_path, capsys):
    assert main(["--debug", "translate", "--model", str(tmp_path / "missing.pt"), "ab"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("attnkit translate: error:")


def test_importing_attnkit_changes_nothing_global():
    code = (
        "import logging, sys, torch; threads = torch.get_num_threads();"
        "import attnkit, attnkit.visualization.heatmap, attnkit.visualization.faithfulness, attnkit.serve;"
        "handlers = logging.getLogger('attnkit').handlers;"
        "assert all(isinstance(h, logging.NullHandler) for h in handlers), handlers;"
        "assert not logging.getLogger().handlers;"
        "assert 'matplotlib.pyplot' not in sys.modules;"  # no backend chosen, no figure registry
        "print(torch.get_num_threads() == threads)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr


def test_the_library_never_prints(tmp_path, capsys):
    from attnkit import train
    from attnkit.config import load_config

    sets = [
        f"training.out_dir={tmp_path / 'run'}",
        "training.max_steps=2",
        "training.validate_every=2",
        "training.progress=false",
        f"data.train=[{ROOT}/src/attnkit/configs/toy_copy.tsv]",
        f"data.dev=[{ROOT}/src/attnkit/configs/toy_copy_dev.tsv]",
    ]
    train(load_config(TOY, sets))
    assert capsys.readouterr().out == ""


def test_stdin_text_streams_still_work(translator_ckpt, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("ab cd\n"))
    assert main(["translate", "--model", str(translator_ckpt), "--json", "--beam", "1"]) == 0
    assert "translation" in json.loads(capsys.readouterr().out.splitlines()[0])


INTERRUPT_DURING_IMPORT = """
import os, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["INTERRUPT_AT"]:
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupt())
from attnkit.cli import entry
entry()
"""


@pytest.mark.parametrize("module", ["argparse", "attnkit.cli.main", "numpy", "onnxruntime"])
def test_ctrl_c_while_the_cli_is_still_importing_is_one_line_and_130(module):
    """The console script's entry imports nothing before its try: Ctrl-C during any import is exit 130."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPT_DURING_IMPORT, "translate", "The cat."],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "INTERRUPT_AT": module},
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("interrupted") and "Traceback" not in done.stderr


def test_importing_the_console_script_imports_nothing_heavy():
    code = "import sys, attnkit.cli; print(sorted({'argparse', 'numpy', 'attnkit.api'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize("adapt", ["0", "5"])
def test_align_refuses_a_reverse_model_of_the_wrong_direction(tmp_path, capsys, adapt):
    """en->fr with an en->fr "reverse" model: refused before any work (before fine-tuning with --adapt)."""
    (tmp_path / "s.txt").write_text("the cat\n")
    (tmp_path / "t.txt").write_text("le chat\n")
    args = ["align", "--src", str(tmp_path / "s.txt"), "--tgt", str(tmp_path / "t.txt"), "--adapt", adapt]
    assert main([*args, "--reverse-model", "enfr-transformer"]) == 2
    assert "the reverse model must translate fr->en" in capsys.readouterr().err
    if adapt == "0":
        assert main([*args, "--reverse-model", "fren-rnn"]) == 0
        assert capsys.readouterr().out.strip() == "0-0 1-1"


def test_every_option_of_every_command_has_help():
    import argparse

    from attnkit.cli.main import build_parser

    missing = []
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += [
                    f"{name} {a.option_strings or a.dest}"
                    for a in sub._actions
                    if not a.help and not isinstance(a, argparse._HelpAction)
                ]
    assert missing == []


HELD_DURING_IMPORT = """
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from attnkit.cli.interrupts import install
install()
try:
    import swallower  # sends itself Ctrl-C mid-import, then swallows what reaches it, as some libraries do
    time.sleep(1.0)  # the held interrupt is raised here, after the import
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after the import; module complete:", swallower.COMPLETE)
"""


def test_ctrl_c_during_an_import_is_held_until_the_import_is_done(tmp_path):
    (tmp_path / "swallower.py").write_text(
        "import os, signal, time\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(0.2)\n"
        "except BaseException:\n"
        "    pass\n"
        "COMPLETE = True\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", HELD_DURING_IMPORT, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "interrupted after the import; module complete: True", done.stderr


def test_outputs_go_through_links_and_never_over_folders_devices_pipes_or_into_missing_folders(
    translator_ckpt, tmp_path, capsys
):
    """A bad-input probe's findings: convert replaced a FIFO (or, as root, /dev/null) by a regular file,
    replaced a symbolic link by a file, and died with a traceback for a missing folder."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for out, said in [
        (fifo, "is not a regular file (a device or a pipe)"),
        (tmp_path / "missing" / "x.pt", "its folder does not exist"),
        (tmp_path, "is a folder: give a file name"),
    ]:
        assert main(["convert", str(translator_ckpt), str(out)]) == 2
        _one_line_error(capsys, str(out), said)
    assert fifo.exists() and not fifo.is_file()
    real, link = tmp_path / "real.pt", tmp_path / "link.pt"
    real.write_bytes(b"")
    link.symlink_to(real)
    assert main(["convert", str(translator_ckpt), str(link)]) == 0
    assert link.is_symlink() and real.stat().st_size > 1000  # written through the link, which stays
    capsys.readouterr()
    assert main(["convert", str(tmp_path), str(tmp_path / "y.pt")]) == 2
    _one_line_error(capsys, "is a folder, not a file")
    (tmp_path / "empty.pt").write_bytes(b"")
    assert main(["convert", str(tmp_path / "empty.pt"), str(tmp_path / "z.pt"), "--trust-pickle"]) == 2
    _one_line_error(capsys, "not an attnkit checkpoint (an empty file)")


def test_heads_never_writes_over_its_model_and_names_an_export(transformer_ckpt, tmp_path, capsys):
    src, ref = tmp_path / "s.txt", tmp_path / "r.txt"
    src.write_text("the cat sat .\n")
    ref.write_text("le chat .\n")
    before = transformer_ckpt.read_bytes()
    args = [
        "heads",
        str(transformer_ckpt),
        "--src",
        str(src),
        "--ref",
        str(ref),
        "--out",
        str(transformer_ckpt),
    ]
    assert main(args) == 2
    _one_line_error(capsys, "is also the model")
    assert transformer_ckpt.read_bytes() == before
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "manifest.json").write_text("{}")
    assert main(["heads", str(tmp_path / "exp"), "--src", str(src), "--ref", str(ref)]) == 2
    _one_line_error(capsys, "is an ONNX export: give the checkpoint it was exported from")
