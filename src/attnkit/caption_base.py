"""One base for captioning: images in, captions with their attention over the image out.

Backends (``attnkit.captioner.Captioner`` on torch, ``attnkit.runtime.captioner.OnnxCaptioner``) supply
the settings (``words``, ``channels``, ``height``, ``width``, ``grid``) and ``_stepper()``, a
``search.Stepper`` whose source is a batch of images (B, C, H, W) and whose attention ranges over the
h * w grid cells; the base owns reading images, batching and the one search.

The JSON contract (``attnkit caption --json``; scripts read it): per image, ``caption``, ``tokens``, and
``attention``: per token, a list of h rows of w numbers that sum to 1, where cell (i, j) covers rows
i*H/h..(i+1)*H/h and columns j*W/w..(j+1)*W/w of the image as given (H x W: ``image_size``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import search
from .data.images import image_array, read_image
from .errors import UsageError
from .invariants import check_caption
from .vocab import BOS, EOS, UNK

MAX_WORDS = 50  # the longest caption a search may write


@dataclass
class Caption:
    """One caption. attention (T, h, w): each word's map; eos_attention (h, w): the end's;
    image_size (H, W): the image as given; alternatives: the other n-best captions, best first."""

    caption: str
    tokens: list[str]
    score: float
    attention: np.ndarray
    eos_attention: np.ndarray
    image_size: tuple[int, int]
    source: str = ""
    alternatives: list[Caption] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_caption(self)

    def _repr_html_(self) -> str:
        """How a notebook shows it: the explorer's view, offline (``attnkit.notebook``)."""
        from .names import resolve

        return str(resolve("attnkit.notebook:html")(self))

    @property
    def grid(self) -> tuple[int, int]:
        return int(self.eos_attention.shape[0]), int(self.eos_attention.shape[1])

    def to_json(self, digits: int = 5) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source,
            "caption": self.caption,
            "tokens": self.tokens,
            "score": round(self.score, 4),
            "image_size": list(self.image_size),
            "grid": list(self.grid),
            "attention": np.round(self.attention.astype(np.float64), digits).tolist(),
            "eos_attention": np.round(self.eos_attention.astype(np.float64), digits).tolist(),
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.alternatives:
            out["n_best"] = [
                {"caption": a.caption, "tokens": a.tokens, "score": round(a.score, 4)}
                for a in self.alternatives
            ]
        return out


class CaptionerBase:
    """Subclasses set ``words`` (id -> word; attnkit's special ids first), ``channels``, ``height``,
    ``width``, ``grid`` (h, w), ``max_len`` and implement ``_stepper``."""

    words: list[str]
    channels: int
    height: int
    width: int
    grid: tuple[int, int]
    max_len: int = 20

    def _stepper(self) -> search.Stepper:
        raise NotImplementedError

    def load(self, path: str | Path) -> tuple[np.ndarray, tuple[int, int]]:
        """An image file as the model's input (C, height, width) and its original (H, W)."""
        return read_image(path, self.channels, self.height, self.width)

    def load_bytes(self, data: bytes, where: str = "image") -> tuple[np.ndarray, tuple[int, int]]:
        return image_array(data, where, self.channels, self.height, self.width)

    def caption_files(
        self, paths: list[str | Path], beam_size: int = 1, n_best: int = 1, batch_size: int = 32
    ) -> list[Caption]:
        """Caption image files (every one is read and checked before any is captioned)."""
        loaded = [self.load(p) for p in paths]
        results = self.caption_loaded(loaded, [str(p) for p in paths], beam_size, n_best, batch_size)
        for result, path in zip(results, paths):
            result.source = str(path)
        return results

    def caption_loaded(
        self,
        loaded: list[tuple[np.ndarray, tuple[int, int]]],
        names: list[str],
        beam_size: int = 1,
        n_best: int = 1,
        batch_size: int = 32,
    ) -> list[Caption]:
        """Caption images as ``load`` returns them; a grayscale image on a light background is inverted
        first (``dark_background``) and its caption says so."""
        fixed = [self.dark_background(image, name) for (image, _), name in zip(loaded, names)]
        results: list[Caption] = []
        for s in range(0, len(loaded), batch_size):
            images = np.stack([image for image, _ in fixed[s : s + batch_size]])
            sizes = [size for _, size in loaded[s : s + batch_size]]
            results += self.caption_arrays(images, sizes, beam_size, n_best)
        for result, (_, note) in zip(results, fixed):
            result.warnings += [note] if note else []
        return results

    def dark_background(self, image: np.ndarray, where: str) -> tuple[np.ndarray, str]:
        """A grayscale model reads light strokes on a dark background (as the digits it was trained on):
        an image (1, H, W) whose border is mostly light is inverted, with a note saying so."""
        if self.channels != 1:
            return image, ""
        border = np.concatenate([image[0, 0], image[0, -1], image[0, :, 0], image[0, :, -1]])
        if float(np.median(border)) <= 0.5:
            return image, ""
        return 1.0 - image, (
            f"{where}: light background, so the image was inverted "
            "(the model reads light strokes on a dark background, as it was trained)"
        )

    def caption_arrays(
        self,
        images: np.ndarray,
        sizes: list[tuple[int, int]] | None = None,
        beam_size: int = 1,
        n_best: int = 1,
    ) -> list[Caption]:
        """images (B, C, height, width) float32 in [0, 1] -> B captions (n-best in ``alternatives``)."""
        if beam_size < 1:
            raise UsageError(f"--beam must be >= 1, got {beam_size}")
        if not 1 <= n_best <= beam_size:
            raise UsageError(f"--n-best must be in 1..beam ({beam_size}), got {n_best}")
        sizes = sizes or [(self.height, self.width)] * len(images)
        cells = np.ones((len(images), self.grid[0] * self.grid[1]), dtype=bool)
        stepper = self._stepper()
        pixels, longest = images.astype(np.float32), min(self.max_len, MAX_WORDS)
        if beam_size == 1:
            found = [[h] for h in search.greedy(stepper, pixels, cells, max_ratio=0.0, max_extra=longest)]
        else:
            found = search.beam(
                stepper, pixels, cells, beam_size, 1.0, n_best, max_ratio=0.0, max_extra=longest
            )
        results = []
        for hyps, size in zip(found, sizes):
            best, *others = [self._caption(h, size) for h in hyps]
            best.alternatives = others
            results.append(best)
        return results

    def _caption(self, hyp: search.Hypothesis, size: tuple[int, int]) -> Caption:
        maps = hyp.attention.reshape(-1, *self.grid)  # (T + 1, h, w)
        tokens = [self.words[i] for i in hyp.tokens]
        return Caption(" ".join(tokens), tokens, hyp.score, maps[:-1], maps[-1], size)

    def load_display(self, source: str) -> np.ndarray:
        """The image of ``source`` as drawn in figures: (H, W) or (H, W, 3) uint8, at its own size."""
        image, _ = read_image(source, self.channels, None, None)
        pixels = np.round(image * 255.0).astype(np.uint8)
        return pixels[0] if self.channels == 1 else pixels.transpose(1, 2, 0)

    def forced_attention(self, images: np.ndarray, captions: list[tuple[str, ...]]) -> list[np.ndarray]:
        """Each caption's attention when its words are the decoder's inputs (teacher forcing): per image
        (T_i, h, w), one map per word. images (B, C, height, width)."""
        index = {w: i for i, w in enumerate(self.words)}
        ids = [[index.get(w, UNK) for w in c] for c in captions]
        stepper = self._stepper()
        state = stepper.encode(
            images.astype(np.float32), np.ones((len(images), self.grid[0] * self.grid[1]), bool)
        )
        prev = np.full((len(images), 1), BOS, dtype=np.int64)
        rows = []
        for t in range(max((len(i) for i in ids), default=0)):
            _, _, state, attention = stepper.step(prev, state, 1)
            rows.append(attention[:, 0])
            prev = np.array([[c[t] if t < len(c) else EOS] for c in ids], dtype=np.int64)
        stacked = np.stack(rows, 1) if rows else np.zeros((len(images), 0, self.grid[0] * self.grid[1]))
        return [stacked[i, : len(c)].reshape(len(c), *self.grid) for i, c in enumerate(ids)]

    def evaluate(
        self, examples: list[tuple[Any, tuple[str, ...], Any]], beam_size: int = 1, batch_size: int = 64
    ) -> dict[str, Any]:
        """examples: (image array (H, W[, 3]) uint8 or a file, reference words, boxes or None) -> the
        report of ``evaluation.captioning.caption_report``; attention correctness where boxes are known."""
        from .data.images import fit_array
        from .evaluation.captioning import attention_correctness, caption_report, uniform_correctness

        hypotheses, correct, uniform = [], [], []
        for s in range(0, len(examples), batch_size):
            chunk = examples[s : s + batch_size]
            loaded = [
                (fit_array(x, self.channels, self.height, self.width), x.shape[:2])
                if isinstance(x, np.ndarray)
                else self.load(x)
                for x, _, _ in chunk
            ]
            images = np.stack([image for image, _ in loaded])
            hypotheses += [r.caption for r in self.caption_arrays(images, [z for _, z in loaded], beam_size)]
            if chunk[0][2] is not None:
                maps = self.forced_attention(images, [words for _, words, _ in chunk])
                for (_, _, boxes), m, (_, size) in zip(chunk, maps, loaded):
                    correct.append(attention_correctness(m, boxes, size))
                    uniform.append(uniform_correctness(boxes, size))
        references = [" ".join(words) for _, words, _ in examples]
        return caption_report(hypotheses, references, correct or None, uniform or None)
