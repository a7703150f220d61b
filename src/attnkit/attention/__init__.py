"""attnkit.attention: every classic attention mechanism as a batched, masked, stable module.

Masks are bool, True = may attend. See DESIGN.md for the dimension letters (B, T, S, H, D, ...).
"""

from .core import (
    AttentionOutput,
    attend,
    attention_entropy,
    key_padding_to_attn_mask,
    lengths_to_mask,
    masked_softmax,
)
from .modules import (
    Attention,
    BahdanauAttention,
    CrossAttention,
    LuongAttention,
    PositionAwareAttention,
    SelfAttention,
    calculate_attention_weights,
    scaled_dot_product_attention,
)
from .multihead import KeyValue, MultiHeadAttention, causal_mask
from .pooling import AttentionPooling, HierarchicalAttention, HierarchicalOutput
from .positional import SinusoidalPositionalEncoding, sinusoidal_table
from .scorers import SCORERS, Scorer, build_scorer

__all__ = [
    "SCORERS",
    "Attention",
    "AttentionOutput",
    "AttentionPooling",
    "BahdanauAttention",
    "CrossAttention",
    "HierarchicalAttention",
    "HierarchicalOutput",
    "KeyValue",
    "LuongAttention",
    "MultiHeadAttention",
    "PositionAwareAttention",
    "Scorer",
    "SelfAttention",
    "SinusoidalPositionalEncoding",
    "attend",
    "attention_entropy",
    "build_scorer",
    "calculate_attention_weights",
    "causal_mask",
    "key_padding_to_attn_mask",
    "lengths_to_mask",
    "masked_softmax",
    "scaled_dot_product_attention",
    "sinusoidal_table",
]
