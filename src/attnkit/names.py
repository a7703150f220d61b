"""Names the CLI shows without importing torch (``attnkit --help``, ``attnkit list`` stay instant).

Each tuple mirrors a registry or constant of a torch-side module; tests/test_names.py fails when
they drift apart."""

SCORERS = ("additive", "bahdanau", "bilinear", "concat", "dot", "general", "location", "scaled_dot")
MODELS = ("captioner", "han", "hard_captioner", "rnn", "transformer")
ALIGNMENT_METHODS = ("argmax", "intersect", "threshold", "union")
ATTENTION_MAPS = ("attention", "rollout", "flow", "norm", "grad", "value_zeroing")
ALIGNMENT_SCORES = ATTENTION_MAPS + ("saliency",)
SYMMETRIZATIONS = ("grow-diag-final", "grow-diag", "intersection", "union", "mean")
ATTRIBUTION_METHODS = (
    "attention",
    "rollout",
    "flow",
    "norm",
    "grad",
    "value_zeroing",
    "gradient_x_input",
    "integrated_gradients",
    "leave_one_out",
    "random",
)
