"""ops_nn: the ops-nn operator library (x86-64 CPU kernels for generative-model
inference) from Python.

    import numpy as np, ops_nn
    y = ops_nn.functional.gelu(np.random.randn(128, 128).astype(np.float32))

See docs/python.md for the whole API.
"""

from . import _core
from ._core import (
    Error,
    Op as _CoreOp,
    PackedMatrix,
    TensorDesc,
    bench,
    bench_cases,
    check,
    constant,
    cpu_info,
    desc,
    isa,
    matmul_packed,
    num_threads,
    ops,
    pack_matrix,
    set_isa,
    set_num_threads,
)

__version__ = _core.version()

from . import functional  # noqa: E402
from .custom import register_op  # noqa: E402
from .session import Session, ValueInfo  # noqa: E402


class Op(_CoreOp):
    """Two-phase use of one op.

    ``op = ops_nn.Op("layer_norm", inputs=[x, w, b], axis=-1)`` validates the
    inputs (arrays, tensors, :class:`TensorDesc` or :func:`constant`, ``None``
    for an absent optional input), infers the outputs and picks the kernel
    once; ``op(x, w, b)`` then runs it on tensors of those descriptions as
    often as wanted (no re-validation beyond O(rank) checks; trailing
    constant operands may be left out). ``out=`` writes into caller buffers.
    ``kernel=`` forces a kernel by name (for tests). Properties: name,
    kernel, inputs, outputs, workspace_bytes.
    """

    def __init__(self, name, inputs, *, kernel="", **attrs):
        super().__init__(name, list(inputs), attrs, kernel)


def load_plugin(path):
    """Loads a shared library that registers C++ ops (see include/opsnn/plugin.h);
    its ops appear in ops_nn.functional and ops_nn.ops()."""
    _core.load_plugin(str(path))
    functional._refresh()


_core.load_plugins_from_env()
functional._refresh()

__all__ = [
    "Error", "Op", "PackedMatrix", "TensorDesc", "bench", "bench_cases", "check", "constant", "cpu_info", "desc",
    "functional", "isa", "load_plugin", "matmul_packed", "num_threads", "ops", "pack_matrix",
    "register_op", "Session", "set_isa", "set_num_threads", "ValueInfo",
]
