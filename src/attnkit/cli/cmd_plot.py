"""``attnkit plot FILE --out IMAGE``: heatmaps from saved attention (translate --json lines, or .npz)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..errors import UsageError


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(
        name, help="draw a heatmap from saved attention (JSON lines from translate --json, or .npz)"
    )
    p.add_argument(
        "input",
        help="JSON/JSON-lines with attention, source_tokens, target_tokens; or .npz with the same keys",
    )
    p.add_argument("--out", required=True, help="image to write (.png, .svg, .pdf)")
    p.add_argument("--index", type=int, default=0, help="which record of a JSON-lines file (default 0)")
    p.add_argument(
        "--values",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write each weight in its cell (default: when the grid is at most 12 x 12)",
    )
    p.add_argument("--title", default="Attention weights", help="the figure's title")
    p.set_defaults(run=run)


def _record(path: Path, index: int) -> dict[str, Any]:
    if not path.exists():
        raise UsageError(f"{path}: no such file")
    if path.suffix == ".npz":
        import zipfile

        import numpy as np

        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError, zipfile.BadZipFile) as e:
            raise UsageError(f"{path}: not a .npz file ({e})") from None
        missing = {"attention", "source_tokens", "target_tokens"} - set(data.files)
        if missing:
            raise UsageError(f"{path}: missing arrays {sorted(missing)}")
        return {k: data[k].tolist() for k in data.files}
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except UnicodeDecodeError as e:
        raise UsageError(
            f"{path}: not UTF-8 text (byte {e.start}); expected JSON lines or a .npz file"
        ) from None
    if not lines:
        raise UsageError(f"{path}: empty; expected JSON lines from translate --json, or a .npz file")
    if not 0 <= index < len(lines):
        raise UsageError(f"{path}: --index {index} out of range (0..{len(lines) - 1})")
    try:
        record = json.loads(lines[index])
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{index + 1}: invalid JSON ({exc.msg})") from None
    for key in ("attention", "source_tokens", "target_tokens"):
        if key not in record:
            raise UsageError(f"{path}:{index + 1}: record has no {key!r}")
    return dict(record)


def _weights(record: dict[str, Any], where: str) -> Any:
    """The record's attention as a (T, S) float matrix matching its tokens; one line otherwise."""
    import numpy as np

    source, target = record["source_tokens"], record["target_tokens"]
    if not isinstance(source, list) or not isinstance(target, list):
        raise UsageError(f"{where}: source_tokens and target_tokens must be lists of strings")
    try:
        weights = np.asarray(record["attention"], dtype=float)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: attention must be a list of rows of numbers") from None
    expected = (len(target), len(source))
    if weights.ndim != 2 or weights.shape != expected or not weights.size:
        raise UsageError(
            f"{where}: attention must be (T, S) = {expected} (target x source tokens, not empty), "
            f"got {weights.shape}"
        )
    if not np.isfinite(weights).all():
        raise UsageError(f"{where}: attention holds NaN or infinite weights")
    return weights


def run(args: argparse.Namespace) -> int:
    from ..files import refuse_overwrite
    from ..visualization.heatmap import attention_figure, save_figure

    refuse_overwrite(args.out, {"the input": args.input}, "--out")
    record = _record(Path(args.input), args.index)

    weights = _weights(record, f"{args.input}:{args.index + 1}")
    fig = attention_figure(weights, record["source_tokens"], record["target_tokens"], args.values, args.title)
    save_figure(fig, args.out)
    print(f"written {args.out}")
    return 0
