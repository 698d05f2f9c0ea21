"""Custom ops from Python: prototype an op (schema, NumPy reference, optional
Python kernel) before writing its C++ kernel; ops_nn.check then compares the
kernel with the reference like any built-in op's."""


from . import _core, functional

# Python type of a default -> the library's attribute type name.
_TYPES = {int: "int", float: "float", str: "string"}


def _arg(a):
    # "x" | ("x", "doc") | {"name":..., "doc":..., "optional":..., "variadic":...}
    if isinstance(a, str):
        return (a, "", False, False)
    if isinstance(a, dict):
        return (a["name"], a.get("doc", ""), bool(a.get("optional", False)),
                bool(a.get("variadic", False)))
    return (a[0], a[1] if len(a) > 1 else "", False, False)


def _attr(name, spec):
    # spec: a default value (its type gives the attribute type), or
    # {"type": "int|float|string|int list|float list", "default": ..., "doc": ...}
    if isinstance(spec, dict):
        has = "default" in spec
        return (name, spec["type"], spec.get("default"), has, spec.get("doc", ""))
    if isinstance(spec, (list, tuple)):
        typ = "float list" if any(isinstance(v, float) for v in spec) else "int list"
        return (name, typ, list(spec), True, "")
    if isinstance(spec, bool) or type(spec) not in _TYPES:
        raise TypeError(f"register_op: attribute '{name}': give a default int, float, str, "
                        f"list, or a dict with 'type', got {type(spec).__name__}")
    return (name, _TYPES[type(spec)], spec, True, "")


def _same_as_first(descs, attrs):
    first = next(d for d in descs if d is not None)
    return [first]


def register_op(name, *, inputs, reference, outputs=("y",), attrs=None, doc="", family="custom",
                dtypes=("f32", "bf16", "f16"), infer=None, kernel=None, cases=None,
                tol_scale=1.0):
    """Registers an op implemented in Python.

    inputs / outputs: names (or (name, doc) pairs or dicts with optional/variadic).
    attrs: {name: default} or {name: {"type": ..., "default": ..., "doc": ...}}.
    reference(*arrays, **attrs): float64 NumPy arrays in, array (or tuple) out;
        the float64 oracle of the checker and the op's last-resort kernel.
    kernel(*arrays, **attrs): optional fast(er) path on arrays of the call's dtype
        (views valid during the call); returns the output array(s).
    infer(descs, attrs): output TensorDescs or (dtype, shape) pairs; default:
        one output like the first input.
    cases: [(name, [input shapes], {attrs}), ...] for ops_nn.check.

    The op then appears in ops_nn.functional, ops_nn.ops(), ops_nn.Op and the checker.
    """
    ins = [_arg(a) for a in inputs]
    outs = [_arg(a) for a in outputs]
    attr_specs = [_attr(k, v) for k, v in (attrs or {}).items()]
    if infer is None:
        if len(outs) != 1:
            raise TypeError("register_op: ops with several outputs need infer=")
        infer = _same_as_first
    table = []
    for c in cases or []:
        cname, shapes = c[0], [list(s) for s in c[1]]
        table.append((cname, shapes, dict(c[2]) if len(c) > 2 else {}))
    _core._register_op(name, doc, family, ins, outs, attr_specs, list(dtypes), infer, reference,
                       kernel, table, float(tol_scale))
    functional._refresh()
    return getattr(functional, functional._generated[name])


