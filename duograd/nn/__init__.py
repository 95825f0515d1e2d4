"""Neural networks on the tensor engine: modules (``Module``, ``Linear``, ``MLP``,
``Sequential``, ``ReLU``, ``Tanh``, ``Sigmoid``, ``Dropout``, ``MSELoss``,
``CrossEntropyLoss``, ``Conv2d``, ``MaxPool2d``, ``AvgPool2d``, ``Flatten``), in
``duograd.nn.functional`` the losses composed from primitive operations, and in
``duograd.nn.utils`` gradient clipping and PyTorch state-dict conversion.

>>> import duograd as dg
>>> from duograd import nn
>>> from duograd.nn import functional as F
>>> net = nn.MLP(2, [8, 3], rng=0)
>>> loss = F.cross_entropy(net(dg.ones((4, 2))), [0, 1, 2, 0])
>>> loss.backward()
>>> [p.grad.shape for p in net.parameters()]
[(8, 2), (8,), (3, 8), (3,)]
"""

from . import functional
from .modules import (MLP, CrossEntropyLoss, Dropout, Linear, Module, MSELoss, ReLU, Sequential,
                      Sigmoid, Tanh)
from .modules import (BCELoss, BCEWithLogitsLoss, CosineSimilarity, HuberLoss, KLDivLoss,  # layers
                      L1Loss, NLLLoss, SmoothL1Loss)
from .containers import Identity, ModuleDict, ModuleList, Parameter
from .sparse import Embedding
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .attention import MultiheadAttention
from .modules import Flatten
from .convolution import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                          AvgPool1d, AvgPool2d, Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                          Fold, MaxPool1d, MaxPool2d, MaxUnpool1d, MaxUnpool2d, Unfold, Upsample)
from . import utils  # noqa: E402  (it refers to the modules above)
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402
                          TransformerEncoder, TransformerEncoderLayer)
from . import init  # noqa: E402
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh,  # noqa: E402
                         LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU, ReLU6, SiLU, Softmax,
                         Softmin, Softplus, Softsign)
from . import parallel  # noqa: E402  (branch inventory: the data-parallel wrappers with one device)
from .parallel import DataParallel  # noqa: E402
from .rnn import (GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase)  # noqa: E402

__all__ = ["Module", "Linear", "MLP", "Sequential", "ReLU", "Tanh", "Sigmoid", "Dropout",
           "MSELoss", "CrossEntropyLoss", "Conv2d", "MaxPool2d", "AvgPool2d", "Flatten",
           "functional", "utils",
           # layers branch
           "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "KLDivLoss", "CosineSimilarity", "Identity", "Parameter", "ModuleList", "ModuleDict",
           "Embedding", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm",
           "MultiheadAttention",
           # activations (branch elementwise)
           "GELU", "SiLU", "Mish", "ELU", "SELU", "CELU", "LeakyReLU", "ReLU6", "Hardtanh",
           "Hardsigmoid", "Hardswish", "Softsign", "LogSigmoid", "Softplus", "Softmin", "GLU",
           "PReLU", "Softmax", "LogSoftmax",
           "Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxUnpool1d",
           "MaxUnpool2d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "Upsample", "Unfold", "Fold",
           # transformer branch
           "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer",
           "init",
           # recurrent layers (branch rnn)
           "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]
__all__ += ["DataParallel", "parallel"]  # branch inventory
# issue 28 (branch nnoptim): the module classes of the rest of nn.functional, lazy modules,
# parameter containers
from . import layers_more as _layers_more  # noqa: E402
from .layers_more import *  # noqa: E402,F401,F403

__all__ += _layers_more.__all__
from .modules import Buffer  # noqa: E402,F401

__all__ += ["Buffer"]
