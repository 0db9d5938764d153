# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Neural-network ops (everything in ``torch.nn.functional`` except convolution/pooling, which live in ``conv``).

Each fused op that torch fuses (log_softmax, nll_loss, mse_loss, layer_norm, batch_norm, embedding, ...) is one
``Primitive`` whose node has torch's name (``NllLossBackward0``, ``NativeLayerNormBackward0``); its backward is
written in tapegrad ops, so double backward works. Ops that torch writes as a composition (l1_loss, kl_div,
cosine_similarity, ...) are the same composition here, so their ``grad_fn`` is torch's too.

Where a backward is on the hot path of a training step (linear, cross_entropy, layer_norm, batch_norm) it has a
NumPy fast path that runs only when no graph is recorded for the gradient (``create_graph=False``).

The sub-family modules:

- ``_common``: shared helpers and small private Primitives;
- ``linear``: linear, bilinear, the softmax family;
- ``losses``: classification and regression losses;
- ``margin``: margin and embedding losses;
- ``dropouts``: dropout and its variants;
- ``normalization``: layer / batch / group / instance / rms / local response norm, weight norm;
- ``embeddings``: embedding, embedding_bag;
- ``attention``: distances, similarity, scaled_dot_product_attention, multi_head_attention_forward;
- ``misc``: channel_shuffle, and the ``torch.xxx`` signatures of a few of these (imported last: they replace the
  nn.functional versions of the same names in this namespace, as ``torch.batch_norm`` differs from
  ``torch.nn.functional.batch_norm``).
"""

from ._common import *  # noqa: F403
from .linear import *  # noqa: F403
from .losses import *  # noqa: F403
from .margin import *  # noqa: F403
from .dropouts import *  # noqa: F403
from .normalization import *  # noqa: F403
from .normalization import _weight_norm  # noqa: F401  (torch._weight_norm: private in name only)
from .embeddings import *  # noqa: F403
from .attention import *  # noqa: F403
from .misc import *  # noqa: F403

__all__ = ["softmax", "log_softmax", "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
           "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "layer_norm", "batch_norm",
           "group_norm", "instance_norm", "rms_norm", "embedding", "bilinear", "cosine_similarity",
           "pairwise_distance", "pdist", "native_layer_norm", "native_batch_norm", "kl_div",
           "binary_cross_entropy_with_logits", "poisson_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "triplet_margin_loss", "cosine_embedding_loss", "channel_shuffle", "ctc_loss", "norm_except_dim",
           "native_channel_shuffle", "_weight_norm"]

# the names of torch.nn.functional implemented here (nn/functional.py re-exports them)
FUNCTIONAL = [
    "linear", "bilinear", "softmax", "log_softmax", "softmin", "glu", "cross_entropy", "nll_loss", "mse_loss",
    "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss", "cosine_embedding_loss",
    "multi_margin_loss", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm",
    "local_response_norm", "embedding", "embedding_bag", "normalize", "cosine_similarity", "pairwise_distance",
    "pdist", "scaled_dot_product_attention", "gumbel_softmax", "linear_cross_entropy",
    "triplet_margin_with_distance_loss", "multilabel_margin_loss", "channel_shuffle",
    "multi_head_attention_forward", "ctc_loss", "native_channel_shuffle",
]

