"""``--engine ray`` on a real local Ray cluster (a head and a worker process on this machine): output
byte-identical to the single process for translate, align and evaluate; a dead worker's shard retried;
--resume skipping finished shards; Ctrl-C keeping them; a cluster that does not answer, one line."""

import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

BIN = Path(sys.executable).parent
DATA = Path(__file__).parents[2] / "src" / "attnkit" / "datasets" / "tatoeba_eng_fra"
HANSARDS = Path(__file__).parents[1] / "fixtures" / "hansards"
# Ray >= 2.5x protects a cluster with a token (written to ~/.ray/auth_token by `ray start --head`)
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "OMP_NUM_THREADS": "2", "RAY_AUTH_MODE": "token"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    """A Ray head (1 CPU) and a second node (1 CPU) joined to it, as `ray start` makes them, in their own
    temporary folder; stopped by killing the processes of that folder only (`ray stop` would also stop
    any other Ray on the machine)."""
    port, folder = free_port(), tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Unix socket paths
    ray_bin = str(BIN / "ray")
    common = ["--num-cpus", "1", "--disable-usage-stats", "--node-ip-address", "127.0.0.1"]
    head = [
        ray_bin,
        "start",
        "--head",
        "--port",
        str(port),
        "--include-dashboard",
        "false",
        "--temp-dir",
        folder,
    ]
    try:
        subprocess.run([*head, *common], check=True, env=ENV, capture_output=True)
        node = [ray_bin, "start", "--address", f"127.0.0.1:{port}", *common]
        subprocess.run(node, check=True, env=ENV, capture_output=True)
        yield f"127.0.0.1:{port}"
    finally:
        stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


def stop(folder: str) -> None:
    """SIGTERM, then SIGKILL, every process whose command line names ``folder`` (this cluster's)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and folder.encode() in (proc / "cmdline").read_bytes():
                    os.kill(int(proc.name), sig)
            except (OSError, ProcessLookupError):
                pass
        time.sleep(2)


def attnkit(*argv, stdin=None, env=None, timeout=600):
    return subprocess.run(
        [str(BIN / "attnkit"), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env or ENV,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "dev.en"
    with gzip.open(DATA / "dev.en.gz", "rt", encoding="utf-8") as f:
        lines = [next(f).rstrip("\n") for _ in range(200)]
    lines[7] = ""  # an empty line gives an empty translation, wherever its shard is
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_translate_is_byte_identical_to_one_process(cluster, sources):
    text = sources.read_text(encoding="utf-8") + " ".join(["The cat sits on the mat."] * 60) + "\n"
    argv = ["translate", "--model", "enfr-rnn", "--batch-size", "16", "--json"]
    local = attnkit(*argv, stdin=text)
    assert local.returncode == 0, local.stderr
    spread = attnkit(*argv, "--engine", "ray", "--address", cluster, "--shard-size", "40", stdin=text)
    assert spread.returncode == 0, spread.stderr
    assert spread.stdout == local.stdout  # every float of every attention row too
    assert len(spread.stdout.splitlines()) == 201
    assert "truncated to 200" in local.stderr and "truncated to 200" in spread.stderr  # the worker's warning
    assert "logging.cc" not in spread.stderr  # Ray's note on reading RAY_BACKEND_LOG_LEVEL is dropped


def test_align_and_its_aer_are_identical(cluster):
    files = ["--src", str(HANSARDS / "trial.en-fr.en"), "--tgt", str(HANSARDS / "trial.en-fr.fr")]
    gold = ["--gold", str(HANSARDS / "trial.en-fr.naacl"), "--json"]
    one_thread = {**ENV, "OMP_NUM_THREADS": "1"}  # as each worker runs: grad's floats depend on threads
    for extra in (["--format", "json", "--probabilities"], gold):
        local = attnkit("align", *files, *extra, env=one_thread)
        spread = attnkit("align", *files, *extra, "--engine", "ray", "--address", cluster)
        assert local.returncode == spread.returncode == 0, spread.stderr
        assert spread.stdout == local.stdout
    assert 0 < json.loads(spread.stdout)["aer"] < 0.5


def test_align_over_several_shards_is_identical(cluster, tmp_path):
    """300 pairs in shards of 256 (--shard-size 100 rounded up to a whole window of length-sorted
    batches): each shard is batched as the single process batches it."""
    files = []
    for side in ("en", "fr"):
        with gzip.open(DATA / f"dev.{side}.gz", "rt", encoding="utf-8") as f:
            (tmp_path / side).write_text("".join(next(f) for _ in range(300)), encoding="utf-8")
        files += [f"--{'src' if side == 'en' else 'tgt'}", str(tmp_path / side)]
    argv = ["align", *files, "--format", "json", "--probabilities"]
    local = attnkit(*argv, env={**ENV, "OMP_NUM_THREADS": "1"})  # as each worker runs
    spread = attnkit(*argv, "--engine", "ray", "--address", cluster, "--shard-size", "100",
                     "--shards", str(tmp_path / "job"))  # fmt: skip
    assert local.returncode == spread.returncode == 0, spread.stderr
    assert spread.stdout == local.stdout and len(local.stdout.splitlines()) == 300
    assert len(list((tmp_path / "job" / "shards").glob("*.json"))) == 2


def test_evaluate_scores_the_same_hypotheses(cluster, sources, tmp_path):
    refs = tmp_path / "refs.fr"
    refs.write_text(sources.read_text(encoding="utf-8"), encoding="utf-8")  # any references will do
    argv = ["evaluate", "--model", "enfr-rnn", "--src", str(sources), "--ref", str(refs), "--json"]
    local = attnkit(*argv, "--output", str(tmp_path / "local.fr"))
    spread = attnkit(*argv, "--output", str(tmp_path / "ray.fr"), "--engine", "ray", "--address", cluster)
    assert local.returncode == spread.returncode == 0, spread.stderr
    a, b = json.loads(local.stdout), json.loads(spread.stdout)
    assert (a["bleu"], a["chrf"], a["attention_entropy"]) == (b["bleu"], b["chrf"], b["attention_entropy"])
    assert (tmp_path / "local.fr").read_bytes() == (tmp_path / "ray.fr").read_bytes()


def test_a_dead_worker_is_replaced_and_its_shard_retried(cluster, sources, tmp_path):
    text = sources.read_text(encoding="utf-8")
    argv = ["translate", "--model", "enfr-rnn", "--beam", "1", "--batch-size", "16"]
    local = attnkit(*argv, stdin=text)
    shards = tmp_path / "job"
    env = {**ENV, "ATTNKIT_ENGINE_FAIL_SHARD": "1"}
    spread = attnkit(*argv, "--engine", "ray", "--address", cluster, "--shard-size", "48",
                     "--shards", str(shards), stdin=text, env=env)  # fmt: skip
    assert spread.returncode == 0, spread.stderr
    assert (shards / ".failed-1").exists()  # the worker did die on shard 1
    assert spread.stdout == local.stdout


def test_resume_skips_finished_shards_and_refuses_another_job(cluster, sources, tmp_path):
    text = sources.read_text(encoding="utf-8")
    argv = ["translate", "--model", "enfr-rnn", "--beam", "1", "--engine", "ray", "--address", cluster]
    argv += ["--shard-size", "64", "--shards", str(tmp_path / "job")]
    first = attnkit(*argv, stdin=text)
    assert first.returncode == 0, first.stderr
    kept = tmp_path / "job" / "shards" / "000001.json"
    kept.write_text(json.dumps(["(kept)"] * 64))  # a finished shard is read back, not recomputed
    (tmp_path / "job" / "shards" / "000002.json").unlink()
    (tmp_path / "job" / "shards" / "000003.json").write_text('["trunc')  # not finished: computed again
    again = attnkit(*argv, "--resume", stdin=text)
    assert again.returncode == 0, again.stderr
    assert "2 of 4 shards already" in again.stderr and "000003.json is not a finished shard" in again.stderr
    pairs = zip(again.stdout.splitlines(), first.stdout.splitlines())
    assert all(a == b for a, b in pairs if a != "(kept)")  # the recomputed shards are the same
    assert again.stdout.splitlines().count("(kept)") == 64
    assert attnkit(*argv, stdin=text).returncode == 2  # the folder is not overwritten without --resume
    other = attnkit(*[("2" if a == "1" else a) for a in argv], "--resume", stdin=text)  # --beam 2
    assert other.returncode == 2 and "(--beam) differ" in other.stderr


def test_ctrl_c_stops_workers_and_keeps_finished_shards(cluster, sources, tmp_path):
    text = sources.read_text(encoding="utf-8")
    shards = tmp_path / "job"
    argv = [str(BIN / "attnkit"), "translate", "--model", "enfr-rnn", "--engine", "ray"]
    argv += ["--address", cluster, "--shard-size", "16", "--batch-size", "16", "--shards", str(shards)]
    job = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=ENV)  # fmt: skip
    job.stdin.write(text)
    job.stdin.close()
    deadline = time.monotonic() + 300
    while not list((shards / "shards").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    job.send_signal(signal.SIGINT)
    assert job.wait(timeout=60) == 130
    said = [line for line in job.stderr.read().splitlines() if "interrupted" in line]
    assert len(said) == 1 and "shards kept in" in said[0]  # one line says it and what was kept
    done = sorted((shards / "shards").glob("*.json"))
    assert 1 <= len(done) < 13
    finished = attnkit(*argv[1:], "--resume", stdin=text)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == attnkit(*argv[1:4], stdin=text).stdout


def test_a_cluster_that_does_not_answer_is_one_line_within_30_s(sources):
    start = time.monotonic()
    done = attnkit("translate", "--engine", "ray", "--address", f"127.0.0.1:{free_port()}", "Hello.")
    assert time.monotonic() - start < 30
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("no Ray cluster answers there (Connection refused)")
    bad = attnkit("translate", "--engine", "ray", "--address", "nowhere", "Hello.")
    assert bad.returncode == 2 and "expected HOST:PORT" in bad.stderr


def test_something_that_listens_but_is_not_ray_is_one_line_within_30_s():
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []
    threading.Thread(target=lambda: held.extend(server.accept() for _ in range(8)), daemon=True).start()
    start = time.monotonic()
    done = attnkit("translate", "--engine", "ray", "--address", f"127.0.0.1:{server.getsockname()[1]}", "Hi.")
    assert time.monotonic() - start < 30
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("(is it the head's GCS port, 6379 by default?)")
    server.close()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["translate", "--address", "127.0.0.1:1", "Hi."], "--address goes with --engine ray"),
        (["translate", "--resume", "Hi."], "--resume continues a sharded job"),
        (["align", "--src", "x", "--tgt", "y", "--shard-size", "0"], "--shard-size goes with --engine ray"),
        (["translate", "--engine", "ray", "--address", " ", "Hi."], "--address is empty"),
        (["translate", "--engine", "ray", "--resume", "Hi."], "give that folder"),
        (["translate", "--engine", "ray", "--plot", "x.png", "Hi."], "run it without --engine ray"),
        (["translate", "--engine", "ray", "--workers", "0", "Hi."], "--workers must be >= 1"),
    ],
)
def test_engine_options_that_do_not_go_together(argv, message, tmp_path):
    done = attnkit(*argv)
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "x.png").exists()
