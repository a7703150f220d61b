"""Show, Attend and Tell (Xu et al. 2015): a CNN's feature grid, an LSTM decoder with attention over it.

The encoder is a small CNN trained from scratch: ``conv_channels`` blocks of two 3x3 convolutions and a 2x2
max pool, over the image plus two coordinate channels (CoordConv, Liu et al. 2018); the last block's map
with its cells' (row, column) coordinates appended, (B, D, h, w), becomes L = h * w annotation vectors
a (B, L, D), so that each knows where in the image it is; cell (i, j) covers rows i*H/h..(i+1)*H/h and
columns j*W/w..(j+1)*W/w. (The paper used VGG's 14 x 14 grid; without pretraining, the coordinates let the
decoder read a string left to right. BatchNorm after each convolution: without it the CNN learned the
digits several times slower.)

Each decoder step t, from the previous word y (B,) and state (h, c):
  alpha_t = softmax(score(h_{t-1}, a))          attention (B, L), any scorer of the registry (additive here)
  z_t     = beta_t * sum_l alpha_tl a_l          beta_t = sigmoid(f_beta(h_{t-1})): the gating scalar
  h_t, c_t = LSTM([E y_{t-1}; z_t], (h_{t-1}, c_{t-1}))
  p(y_t)  = softmax(L_o(E y_{t-1} + L_h h_t + L_z z_t))   the deep output layer (eq. 7)
h_0, c_0 come from MLPs of the mean annotation vector (sec. 3.1.2).

Hard attention (``hard=True``, sec. 4.1): in training the context is one sampled annotation vector
a_s, s ~ Multinoulli(alpha_t) (the training task adds the REINFORCE term); at inference, the most probable
location (argmax alpha_t). The attention a user sees is alpha_t either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..attention.modules import Attention
from ..vocab import BOS, PAD
from .backbones import BackboneEncoder, with_coordinates


class ConvEncoder(nn.Module):
    """Shapes: images (B, C, H, W) in [0, 1] -> annotations (B, h * w, D), h = H / 2^n, w = W / 2^n,
    D = the last block's channels + 2 (the cell's row and column, each in [-1, 1])."""

    def __init__(self, channels: int, conv_channels: Sequence[int], stem_pool: int = 1) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.AvgPool2d(stem_pool)] if stem_pool > 1 else []
        width = channels + 2  # the image's channels and the two coordinate channels
        for out in conv_channels:
            layers += [nn.Conv2d(width, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU()]
            layers += [nn.Conv2d(out, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
            width = out
        self.net = nn.Sequential(*layers)
        self.out_size = width + 2  # the last block's channels and the cell's (row, column) coordinates
        self.downsample = stem_pool * 2 ** len(conv_channels)

    def grid(self, size: tuple[int, int]) -> tuple[int, int]:
        """The (h, w) grid of an input of ``size`` (H, W)."""
        return size[0] // self.downsample, size[1] // self.downsample

    def forward(self, images: Tensor) -> tuple[Tensor, tuple[int, int]]:
        batch, _, height, width = images.shape
        ys = torch.linspace(-1.0, 1.0, height, device=images.device).view(1, 1, height, 1)
        xs = torch.linspace(-1.0, 1.0, width, device=images.device).view(1, 1, 1, width)
        coords = torch.cat([ys.expand(batch, 1, height, width), xs.expand(batch, 1, height, width)], 1)
        return with_coordinates(self.net(torch.cat([images * 2.0 - 1.0, coords], 1)))


@dataclass
class StepOutput:
    """One decoder step. logits (B, V); h, c (B, Hd); alpha (B, L); beta (B, 1); log_chosen (B,)."""

    logits: Tensor
    h: Tensor
    c: Tensor
    alpha: Tensor
    beta: Tensor
    log_chosen: Tensor


class Captioner(nn.Module):
    """Args: vocab_size V (attnkit's special ids; <pad> and <s> are never predicted); channels C (1 or 3);
    conv_channels (one pooling block each); embed_size E; hidden_size Hd; attention_size (the additive
    scorer's); scorer (a registered name); dropout (before the output layer); hard (see the module doc);
    backbone: "" (the small CNN above) or a ResNet trunk ("resnet18", "resnet34": ``models.backbones``,
    torchvision's weights loaded by path before training)."""

    def __init__(
        self,
        vocab_size: int,
        channels: int = 1,
        conv_channels: Sequence[int] = (32, 64),
        stem_pool: int = 2,
        embed_size: int = 64,
        hidden_size: int = 256,
        attention_size: int = 128,
        scorer: str = "additive",
        dropout: float = 0.3,
        hard: bool = False,
        backbone: str = "",
    ) -> None:
        super().__init__()
        self.hard = hard
        self.encoder: ConvEncoder | BackboneEncoder = (
            BackboneEncoder(backbone) if backbone else ConvEncoder(channels, conv_channels, stem_pool)
        )
        size = self.encoder.out_size
        options = {"attention_size": attention_size} if scorer in ("additive", "bahdanau", "concat") else {}
        self.attention = Attention(scorer, hidden_size, size, **options)
        self.init_h = nn.Linear(size, hidden_size)
        self.init_c = nn.Linear(size, hidden_size)
        self.f_beta = nn.Linear(hidden_size, 1)
        self.embed = nn.Embedding(vocab_size, embed_size, padding_idx=PAD)
        self.lstm = nn.LSTMCell(embed_size + size, hidden_size)
        self.L_h = nn.Linear(hidden_size, embed_size)
        self.L_z = nn.Linear(size, embed_size)
        self.L_o = nn.Linear(embed_size, vocab_size)
        self.dropout = nn.Dropout(dropout)
        blocked = torch.zeros(vocab_size)
        blocked[[PAD, BOS]] = -1e9  # never predicted
        self.register_buffer("blocked", blocked, persistent=False)
        # REINFORCE's baseline for hard attention: a moving average of log p(y | s) (sec. 4.1)
        self.register_buffer("reward_baseline", torch.zeros(()))

    def encode(self, images: Tensor) -> tuple[Tensor, tuple[int, int]]:
        """images (B, C, H, W) in [0, 1] -> annotations (B, L, D) and the grid (h, w)."""
        return self.encoder(images)

    def start(self, annotations: Tensor) -> tuple[Tensor, Tensor, Tensor | None]:
        """-> h_0, c_0 (B, Hd) and the scorer's key projections (passed back to every step)."""
        mean = annotations.mean(1)
        keys = self.attention.precompute(annotations)
        return torch.tanh(self.init_h(mean)), torch.tanh(self.init_c(mean)), keys

    def step(
        self,
        prev: Tensor,
        annotations: Tensor,
        keys: Tensor | None,
        h: Tensor,
        c: Tensor,
        sample: bool = False,
        soft_rows: Tensor | None = None,
    ) -> StepOutput:
        """prev (B,) word ids -> the next word's logits and state. Hard attention draws its location
        when ``sample`` (training), else takes the argmax; ``log_chosen`` (B,): that location's log-prob."""
        alpha = self.attention(h, annotations, keys_proj=keys).weights  # (B, L)
        if self.hard:
            where = torch.multinomial(alpha.detach(), 1) if sample else alpha.argmax(-1, keepdim=True)
            log_chosen = torch.log(alpha.gather(1, where)[:, 0].clamp_min(1e-12))
            context = annotations.gather(1, where[:, :, None].expand(-1, -1, annotations.shape[2]))[:, 0]
            if soft_rows is not None:  # these images take the expected context this time (sec. 4.1)
                expected = torch.bmm(alpha[:, None], annotations)[:, 0]
                context = torch.where(soft_rows[:, None], expected, context)
                log_chosen = log_chosen.masked_fill(soft_rows, 0.0)
        else:
            log_chosen = torch.zeros_like(alpha[:, 0])
            context = torch.bmm(alpha[:, None], annotations)[:, 0]  # (B, D)
        beta = torch.sigmoid(self.f_beta(h))
        z = beta * context
        embedded = self.embed(prev)
        h, c = self.lstm(torch.cat([embedded, z], -1), (h, c))
        logits = self.L_o(self.dropout(embedded + self.L_h(h) + self.L_z(z)))
        if not self.training:  # (in training, label smoothing would pay -1e9 for them)
            logits = logits + self.blocked
        return StepOutput(logits, h, c, alpha, beta, log_chosen)

    def forward(self, images: Tensor, inputs: Tensor, sample: bool = False) -> tuple[Tensor, Tensor, Tensor]:
        """Teacher forcing. images (B, C, H, W), inputs (B, T) word ids starting with <s> ->
        logits (B, T, V), attention (B, T, L), and the log-probabilities of hard attention's chosen
        locations (B, T) (zeros for soft attention). ``sample``: hard attention samples its locations."""
        annotations, _ = self.encode(images)
        h, c, keys = self.start(annotations)
        logits, alphas, chosen = [], [], []
        # hard attention in training: with probability 0.5 an image takes the expected context instead of a
        # sampled one (Xu et al. sec. 4.1, "to further improve the robustness of this learning rule")
        soft_rows = torch.rand(images.shape[0], device=images.device) < 0.5 if self.hard and sample else None
        for t in range(inputs.shape[1]):
            out = self.step(inputs[:, t], annotations, keys, h, c, sample=sample, soft_rows=soft_rows)
            h, c = out.h, out.c
            logits.append(out.logits)
            alphas.append(out.alpha)
            chosen.append(out.log_chosen)
        return torch.stack(logits, 1), torch.stack(alphas, 1), torch.stack(chosen, 1)


def doubly_stochastic_penalty(alphas: Tensor, mask: Tensor) -> Tensor:
    """lambda's factor in Xu et al.'s eq. 14: sum over images and cells of (1 - sum_t alpha_tl)^2, over
    the real steps only. Shapes: alphas (B, T, L), mask (B, T) bool -> a scalar."""
    covered = (alphas * mask[:, :, None]).sum(1)  # (B, L)
    return ((1.0 - covered) ** 2).sum()


@dataclass
class CaptionState:
    """The decoder state between search steps. annotations (B, L, D); keys (B, L, A) or None; h, c (B, Hd)."""

    annotations: Tensor
    keys: Tensor | None
    h: Tensor
    c: Tensor

    def _map(self, on: Callable[[Tensor], Tensor]) -> CaptionState:
        keys = None if self.keys is None else on(self.keys)
        return CaptionState(on(self.annotations), keys, on(self.h), on(self.c))

    def reorder(self, index: Tensor) -> CaptionState:
        return self._map(lambda t: t.index_select(0, index))

    def expand(self, beam: int) -> CaptionState:
        return self._map(lambda t: t.repeat_interleave(beam, 0))


class _Output:
    def __init__(self, target_ids: Tensor) -> None:
        self.target_ids = target_ids


class CaptionSteps:
    """A Captioner seen as a seq2seq model (``decoding.TorchStepper``): the images are the source and
    the L grid cells the positions attention ranges over. encode(images (B, C, H, W), cells (B, L)) ->
    state; step(prev (B, 1), state) -> log-probabilities (B, V), state, attention (B, 1, L)."""

    def __init__(self, model: Captioner) -> None:
        self.model = model
        self.output = _Output(torch.arange(model.L_o.out_features))

    def encode(self, images: Tensor, cells: Tensor) -> CaptionState:
        annotations, _ = self.model.encode(images)
        h, c, keys = self.model.start(annotations)
        return CaptionState(annotations, keys, h, c)

    def step(self, prev: Tensor, state: CaptionState) -> tuple[Tensor, CaptionState, Tensor]:
        out = self.model.step(prev[:, 0], state.annotations, state.keys, state.h, state.c)
        next_state = CaptionState(state.annotations, state.keys, out.h, out.c)
        return torch.log_softmax(out.logits.float(), -1), next_state, out.alpha[:, None]
