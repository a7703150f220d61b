"""``attnkit serve`` as users run it: prints its URL, answers on 127.0.0.1, stops cleanly on Ctrl-C."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest


def test_serve_prints_its_url_answers_and_stops_on_ctrl_c():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "attnkit", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        for _ in range(100):
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).json()
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert health["status"] == "ok"
        page = httpx.get(f"http://127.0.0.1:{port}/").text
        assert "attnkit explorer" in page and "explorer.js" in page
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "Traceback" not in err and "stopped" in err


@pytest.mark.parametrize(("flag", "value"), [("--port", "70000"), ("--max-batch", "0")])
def test_bad_options_are_a_one_line_error(flag, value):
    args = [sys.executable, "-m", "attnkit", "serve", flag, value]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and flag in done.stderr


def test_a_busy_port_or_unknown_host_is_one_line_before_any_url():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        args = [sys.executable, "-m", "attnkit", "serve", "--port", str(port)]
        done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and f"port {port}" in done.stderr
    args = [sys.executable, "-m", "attnkit", "serve", "--host", "no-such-host.invalid"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "" and "cannot resolve" in done.stderr


def test_two_models_with_one_name_are_refused_before_loading(tmp_path):
    from attnkit.errors import UsageError
    from attnkit.serve import ModelSet

    specs = [str(tmp_path / "a" / "model"), str(tmp_path / "b" / "model")]
    with pytest.raises(UsageError, match="would both be served as 'model'"):
        ModelSet(specs, [])
