"""ops_nn.Session: an ONNX model run by the library's graph runtime."""

from typing import NamedTuple, Optional, Tuple, Union

from . import _core


class ValueInfo(NamedTuple):
    """A model input or output: dtype as the library names it ("f32", "bf16",
    ...) and shape, whose dims are ints, symbol names ("batch") or None (a dim
    the model leaves unnamed). dtype and shape are None for an output whose
    type the model does not declare."""

    name: str
    dtype: Optional[str]
    shape: Optional[Tuple[Union[int, str, None], ...]]


class Session:
    """Session(path, *, num_threads=None, max_plans=8) loads an ONNX model.

    ``run({name: array}, outputs=None)`` returns ``{output name: array}``:
    NumPy in, NumPy out; torch in, torch out (the kind of the first fed input
    in model order). Contiguous inputs are read in place; others are copied
    once. A plan (kernels chosen, weights packed, one arena) is made for each
    distinct set of input shapes on first use and kept (at most ``max_plans``
    per set of requested outputs). ``outputs=[names]`` computes only what
    those outputs need. The GIL is released while a plan is made and run;
    runs of one plan are serialised (Python threads sharing a session with
    the same shapes take turns; the library's own threads parallelise each
    run). ``num_threads`` sets the library's thread pool, which is one per
    process (the same as :func:`ops_nn.set_num_threads`).
    """

    def __init__(self, path, *, num_threads=None, max_plans=8):
        if num_threads is not None:
            _core.set_num_threads(int(num_threads))
        self._s = _core.Session(str(path), int(max_plans))
        self.inputs = [ValueInfo(*v) for v in self._s.inputs]
        self.outputs = [ValueInfo(*v) for v in self._s.outputs]

    @property
    def input_names(self):
        return [v.name for v in self.inputs]

    @property
    def output_names(self):
        return [v.name for v in self.outputs]

    @property
    def path(self):
        return self._s.path

    @property
    def plans_cached(self):
        """How many plans (one per input shapes and requested outputs) are kept."""
        return self._s.plans_cached

    def run(self, feeds, outputs=None):
        if not isinstance(feeds, dict):
            raise TypeError("Session.run: feeds must be a dict of input name -> tensor, got "
                            + type(feeds).__name__)
        if isinstance(outputs, str):
            outputs = [outputs]
        return self._s.run(feeds, None if outputs is None else list(outputs))

    def __repr__(self):
        return (f"<ops_nn.Session {self.path}: inputs {self.input_names}, "
                f"outputs {self.output_names}>")
