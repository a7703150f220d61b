"""Try attnkit as a careless user and a hostile client would; count tracebacks, 5xx, files lost.

    python scripts/probe_bad_input.py            # CLI cases as subprocesses, HTTP cases on the app

Each CLI case must exit 2 with one line on stderr and no traceback (or succeed where the input is
valid), and leave every file it was given byte-for-byte as it was. Each HTTP case must answer 4xx JSON
(never 5xx), and a good request sent beside a bad one must still succeed. Prints one row per case and
the totals; exits 1 when any case fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOY = str(ROOT / "configs" / "toy-copy.yaml")


def cli_cases(tmp: Path) -> list[tuple[str, list[str], bytes | None, list[Path]]]:
    """(name, argv, stdin, files that must be kept) per case."""
    src, ref, junk, empty = tmp / "src.en", tmp / "ref.fr", tmp / "junk.pt", tmp / "empty.txt"
    src.write_text("The cat sits on the mat.\n")
    ref.write_text("Le chat est assis sur le tapis.\n")
    junk.write_bytes(os.urandom(2048))
    empty.write_text("")
    (tmp / "dup.yaml").write_text("training:\n  lr: 0.1\ntraining:\n  max_steps: 3\n")
    (tmp / "empty.yaml").write_text("")
    gold = tmp / "gold"
    gold.write_text("1 40 1\n")
    ev = ["evaluate", "--src", str(src), "--ref", str(ref)]
    return [
        ("evaluate --output = --src", [*ev, "--output", str(src)], None, [src, ref]),
        ("evaluate --beam 0", [*ev, "--beam", "0"], None, [src]),
        ("evaluate --beam -1", [*ev, "--beam", "-1"], None, [src]),
        ("evaluate empty --src", ["evaluate", "--src", str(empty), "--ref", str(empty)], None, [empty]),
        ("average --out = input", ["average", str(junk), str(junk), "--out", str(junk)], None, [junk]),
        ("convert NEW = OLD", ["convert", str(junk), str(junk)], None, [junk]),
        (
            "convert --trust-pickle random bytes",
            ["convert", str(junk), str(tmp / "n.pt"), "--trust-pickle"],
            None,
            [junk],
        ),
        ("translate random bytes on stdin", ["translate"], os.urandom(300) + b"\n", []),
        ("translate Latin-1 on stdin", ["translate"], "voilà l'été\n".encode("latin-1"), []),
        ("classify random bytes on stdin", ["classify"], bytes(range(128, 256)) + b"\n", []),
        ("classify Latin-1 on stdin", ["classify"], "très joli\n".encode("latin-1"), []),
        ("translate NUL on stdin", ["translate"], b"a\x00b\n", []),
        ("train empty config", ["train", str(tmp / "empty.yaml")], None, []),
        ("train duplicate key", ["train", str(tmp / "dup.yaml")], None, []),
        ("train vocab_size -3", ["train", TOY, "--set", "data.vocab_size=-3"], None, []),
        ("train max_steps -5", ["train", TOY, "--set", "training.max_steps=-5"], None, []),
        ("train hidden_size 0", ["train", TOY, "--set", "model.rnn.hidden_size=0"], None, []),
        ("train log_every 0", ["train", TOY, "--set", "training.log_every=0"], None, []),
        ("export --out a file", ["export", "enfr-rnn", "--out", str(src)], None, [src]),
        ("evaluate-classifier empty file", ["evaluate-classifier", "--data", str(empty)], None, [empty]),
        (
            "align gold outside the sentence",
            ["align", "--src", str(src), "--tgt", str(ref), "--gold", str(gold)],
            None,
            [gold],
        ),
        ("align empty gold", ["align", "--src", str(src), "--tgt", str(ref), "--gold", str(empty)], None, []),
        ("translate --n-best > --beam", ["translate", "--beam", "2", "--n-best", "3", "a"], None, []),
        ("serve --port 70000", ["serve", "--port", "70000"], None, []),
        ("serve unknown host", ["serve", "--host", "no-such-host.invalid"], None, []),
        ("unknown model", ["translate", "--model", "enfr-rnm", "a"], None, []),
        ("unknown shipped config", ["train", "toy-cpy"], None, []),
        (
            "align reverse model, same direction",
            ["align", "--src", str(src), "--tgt", str(ref), "--reverse-model", "enfr-transformer"],
            None,
            [],
        ),
        ("a pickle that runs a command", ["translate", "--model", str(_evil(tmp)), "a"], None, []),
        *_caption_cases(tmp, junk),
        *_issue_41_cases(tmp, junk),
    ]


def _issue_41_cases(tmp: Path, junk: Path) -> list[tuple[str, list[str], bytes | None, list[Path]]]:
    """Issue 41: lost files, tracebacks and silent garbage of the newer commands."""
    out = tmp / "full"
    out.mkdir(exist_ok=True)
    mine = out / "mine.txt"
    mine.write_text("keep")
    shape = tmp / "shape.json"
    shape.write_text('{"attention": [[0.5, 0.5]], "source_tokens": ["a"], "target_tokens": ["b"]}')
    words = tmp / "words.json"
    words.write_text('{"attention": [["x", 1]], "source_tokens": ["a", "b"], "target_tokens": ["b"]}')
    latin = tmp / "latin.yaml"
    latin.write_bytes("training:\n  lr: 0.1 # été\n".encode("latin-1"))
    empty = tmp / "empty.jsonl"
    empty.write_text("\n")
    hf = ["export", "enfr-transformer", "--format", "hf", "--out"]
    return [
        ("export hf into a folder of files", [*hf, str(out)], None, [mine]),
        (
            "export hf into the model's folder",
            [*hf, str(ROOT / "src/attnkit/pretrained/enfr-transformer")],
            None,
            [],
        ),
        ("plot random bytes", ["plot", str(junk), "--out", str(tmp / "x.png")], None, [junk]),
        ("plot a shape mismatch", ["plot", str(shape), "--out", str(tmp / "x.png")], None, [shape]),
        ("plot non-numeric weights", ["plot", str(words), "--out", str(tmp / "x.png")], None, [words]),
        ("plot --out = input", ["plot", str(shape), "--out", str(shape)], None, [shape]),
        ("train random-bytes config", ["train", str(junk)], None, [junk]),
        ("train Latin-1 config", ["train", str(latin)], None, [latin]),
        ("train lr .inf", ["train", TOY, "--set", "training.lr=.inf"], None, []),
        ("fetch --from a broken URL", ["fetch", "fren-rnn", "--from", "http://[::1"], None, []),
        ("faithfulness empty --data", ["faithfulness", "--data", str(empty)], None, [empty]),
        (
            "faithfulness --out = --data",
            ["faithfulness", "--data", str(empty), "--out", str(empty)],
            None,
            [empty],
        ),
        (
            "translate --plot = --html",
            ["translate", "--plot", str(tmp / "a.png"), "--html", str(tmp / "a.png"), "a"],
            None,
            [],
        ),
        ("translate --html into a folder", ["translate", "--html", str(tmp), "a"], None, []),
    ]


def _caption_cases(tmp: Path, junk: Path) -> list[tuple[str, list[str], bytes | None, list[Path]]]:
    """Images the captioner cannot use: each one line, exit 2 (RGBA and 16-bit are converted, not refused)."""
    import struct
    import zlib

    from PIL import Image

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    huge = tmp / "huge.png"  # a header claiming 20000 x 20000 px, no pixel data
    header = struct.pack(">IIBBBBB", 20000, 20000, 8, 0, 0, 0, 0)
    huge.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b""))
    tiny, cut = tmp / "tiny.png", tmp / "cut.png"
    Image.new("L", (1, 1)).save(tiny)
    good = tmp / "digits.png"
    Image.new("L", (192, 48)).save(good)
    Image.new("L", (192, 48), 255).save(cut)
    cut.write_bytes(cut.read_bytes()[:60])
    return [
        ("caption random bytes", ["caption", str(junk)], None, [junk]),
        ("caption a truncated PNG", ["caption", str(cut)], None, [cut]),
        ("caption a 1x1 image", ["caption", str(tiny)], None, [tiny]),
        ("caption a 20000x20000 image", ["caption", str(huge)], None, [huge]),
        ("caption a folder", ["caption", str(tmp)], None, []),
        ("caption --plot into the input", ["caption", str(good), "--plot", str(good)], None, [good]),
        ("caption --html into the input", ["caption", str(good), "--html", str(good)], None, [good]),
    ]


def _evil(tmp: Path) -> Path:
    """A torch.save file whose unpickling would run ``touch`` (it must be refused, never run)."""
    code = (
        "import os, sys, torch\n"
        "class E:\n    def __reduce__(self): return (os.system, ('touch ' + sys.argv[2],))\n"
        "torch.save({'model': E()}, sys.argv[1])"
    )
    path = tmp / "evil.pt"
    subprocess.run([sys.executable, "-c", code, str(path), str(tmp / "PWNED")], check=True)
    return path


def run_interrupts(tmp: Path) -> list[tuple[str, bool, str]]:
    """Ctrl-C at many moments: while the CLI imports, loads and translates (exit 130 or done, one line,
    no traceback), and during training (then the run folder's newest checkpoint must load). The first
    ~30 ms are Python's own start-up (site, encodings), before any attnkit code can run: not tried."""
    import signal
    import time

    rows = []
    for delay in [0.03 + 0.02 * k for k in range(20)]:
        process = subprocess.Popen(
            [sys.executable, "-m", "attnkit", "translate", "The cat sits on the mat."],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
        text = err.decode(errors="replace").strip()
        ok = process.returncode in (0, 130) and "Traceback" not in text and len(text.splitlines()) <= 1
        rows.append((f"Ctrl-C translate at {delay:.2f} s", ok, f"exit {process.returncode}: {text[-100:]}"))
    for delay in (0.5, 1.0, 1.3, 1.6, 2.0, 2.5, 3.5, 5.0):
        out = tmp / f"run-{delay}"
        process = subprocess.Popen(
            [sys.executable, "-m", "attnkit", "train", TOY, "--set", f"training.out_dir={out}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=300)
        text = err.decode(errors="replace")
        usable = _newest_loads(out)
        finished = process.returncode == 0 and "stopped: max_steps" in text  # Ctrl-C after the run ended
        ok = (process.returncode == 130 or finished) and "Traceback" not in text and usable
        rows.append(
            (f"Ctrl-C train at {delay:.1f} s", ok, f"exit {process.returncode}, checkpoint usable: {usable}")
        )
    return rows


def _newest_loads(out: Path) -> bool:
    """No run folder, or one whose newest checkpoint loads and resumes."""
    steps = sorted(out.glob("step-*.pt"), key=lambda p: int(p.stem.split("-")[1])) if out.is_dir() else []
    if not steps:
        return True
    code = (
        "import sys; from attnkit.checkpoint import load_checkpoint; "
        "c = load_checkpoint(sys.argv[1]); assert c.optimizer is not None"
    )
    return subprocess.run([sys.executable, "-c", code, str(steps[-1])], capture_output=True).returncode == 0


def run_cli(tmp: Path) -> list[tuple[str, bool, str]]:
    rows = []
    for name, argv, stdin, keep in cli_cases(tmp):
        before = {p: p.read_bytes() for p in keep}
        done = subprocess.run(
            [sys.executable, "-m", "attnkit", *argv], input=stdin or b"", capture_output=True, timeout=300
        )
        err = done.stderr.decode(errors="replace").strip()
        lost = [p.name for p in keep if p.read_bytes() != before[p]]
        last = err.splitlines()[-1] if err else ""
        ok = done.returncode == 2 and "Traceback" not in err and last.startswith("attnkit") and not lost
        rows.append(
            (
                name,
                ok,
                f"exit {done.returncode}: {err.splitlines()[-1] if err else ''}"
                + (f" LOST {lost}" if lost else ""),
            )
        )
    return rows


def run_http() -> list[tuple[str, bool, str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from attnkit.serve import ModelSet, create_app

    client = TestClient(create_app(ModelSet(["enfr-rnn"], ["reviews-han"])), base_url="http://127.0.0.1:8000")
    js = {"Content-Type": "application/json"}
    cases = [
        ("lone surrogate", "/api/translate", json.dumps({"sentences": ["a \ud800"]}), js),
        ("lone surrogate (align)", "/api/align", json.dumps({"sources": ["a \ud800"], "targets": ["b"]}), js),
        ("50,000-deep JSON", "/api/translate", "[" * 50_000 + "]" * 50_000, js),
        (
            "text/plain body",
            "/api/translate",
            json.dumps({"sentences": ["a"]}),
            {"Content-Type": "text/plain"},
        ),
        ("form body", "/api/translate", "sentences=a", {"Content-Type": "application/x-www-form-urlencoded"}),
        (
            "DNS rebinding Host",
            "/api/translate",
            json.dumps({"sentences": ["a"]}),
            {**js, "Host": "evil.example"},
        ),
        (
            "foreign Origin",
            "/api/translate",
            json.dumps({"sentences": ["a"]}),
            {**js, "Origin": "http://evil.example"},
        ),
        ("200 KB model name", "/api/translate", json.dumps({"sentences": ["a"], "model": "m" * 200_000}), js),
        (
            "heavy: 8 x 199 words, beam 10, layers",
            "/api/translate",
            json.dumps(
                {"sentences": [" ".join(["word"] * 199)] * 8, "beam": 10, "n_best": 10, "layers": True}
            ),
            js,
        ),
        (
            "over-long align pair",
            "/api/align",
            json.dumps({"sources": [" ".join(["zqxjkv"] * 99)], "targets": ["a"]}),
            js,
        ),
        (
            "gold link outside the pair",
            "/api/align",
            json.dumps({"sources": ["a b"], "targets": ["c"], "gold": "1 5 1"}),
            js,
        ),
        ("beam as a string", "/api/translate", json.dumps({"sentences": ["a"], "beam": "5"}), js),
        ("not UTF-8 body", "/api/translate", b'{"sentences": ["caf\xe9"]}', js),
        ("5,000-digit beam", "/api/translate", b'{"sentences": ["a"], "beam": ' + b"9" * 5000 + b"}", js),
        (
            "gold link with a superscript",
            "/api/align",
            json.dumps({"sources": ["a"], "targets": ["b"], "gold": "1 \u00b2 1 S"}),
            js,
        ),
        ("unknown field", "/api/translate", json.dumps({"sentences": ["a"], "beem": 3}), js),
        (
            "charset=latin-1",
            "/api/translate",
            b'{"sentences": ["caf\xe9"]}',
            {"Content-Type": "application/json; charset=latin-1"},
        ),
        (
            "Origin on another local port",
            "/api/translate",
            json.dumps({"sentences": ["a"]}),
            {**js, "Origin": "http://localhost:9999"},
        ),
        (
            "39 x 1,000 letters without a space",
            "/api/translate",
            json.dumps({"sentences": ["x" * 1000] * 39}),
            js,
        ),
    ]
    rows = []
    for name, path, body, headers in cases:
        answer = client.post(path, content=body, headers=headers)
        ok = 400 <= answer.status_code < 500 and "error" in answer.json() and len(answer.content) < 2_000
        rows.append((name, ok, f"{answer.status_code}: {answer.json().get('error', '')[:90]}"))
    wrong = client.get("/api/translate")
    rows.append(
        (
            "GET on a POST route",
            wrong.status_code == 405 and wrong.headers.get("allow") == "POST",
            str(wrong.status_code),
        )
    )
    good = client.post("/api/translate", json={"sentences": ["Good night!"]})
    rows.append(("a good request after all that", good.status_code == 200, str(good.status_code)))
    return rows


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        rows = run_cli(Path(tmp)) + run_http() + run_interrupts(Path(tmp))
        if (Path(tmp) / "PWNED").exists():
            rows.append(("the crafted pickle never ran", False, "it ran: PWNED exists"))
    for name, ok, detail in rows:
        print(f"{'ok  ' if ok else 'FAIL'} {name:40s} {detail[:120]}")
    failed = sum(not ok for _, ok, _ in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
