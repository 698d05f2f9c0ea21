"""ops_nn.functional: one function per registered op, generated from its schema.

Positional tensor inputs in schema order, attributes as keyword arguments
with the schema's defaults, ``out=`` to write into caller buffers. Ops with
several outputs return a tuple. The functions are made from the registry when
ops_nn is imported and again after load_plugin / register_op.
"""

import keyword

from . import _core

_generated = {}  # op name -> Python name


def _ident(name):
    n = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not n or n[0].isdigit():
        n = "_" + n
    return n + "_" if keyword.iskeyword(n) else n


def _doc(s):
    lines = [s["doc"] or s["name"], ""]
    if s["inputs"]:
        lines.append("Inputs:")
        for name, doc, optional, variadic in s["inputs"]:
            tag = " (optional)" if optional else (" (any number)" if variadic else "")
            lines.append(f"    {name}{tag}: {doc}")
    if s["attrs"]:
        lines.append("Attributes (keyword):")
        for name, typ, default, has_default, doc in s["attrs"]:
            d = f" = {default!r}" if has_default else " (required)"
            lines.append(f"    {name}: {typ}{d}. {doc}")
    lines.append("Returns:")
    for name, doc, _, variadic in s["outputs"]:
        lines.append(f"    {name}{' (several)' if variadic else ''}: {doc}")
    lines.append(f"dtypes: {', '.join(s['dtypes'])}. out= takes a tensor (a tuple for several outputs).")
    return "\n".join(lines)


def _make(name):
    s = _core.schema(name)
    fn = _core._Function(name)
    ns = {"_fn": fn}
    params, ins = [], []
    inputs = s["inputs"]
    used = set()
    variadic = None
    for i, (iname, _, optional, var) in enumerate(inputs):
        p = _ident(iname)
        used.add(p)
        if var:
            variadic = p
            continue
        # An optional input gets a None default when every later one has one too.
        later_optional = all(o or v for _, _, o, v in inputs[i + 1:])
        params.append(f"{p}=None" if optional and later_optional else p)
        ins.append(p)
    if variadic:
        params.append("*" + variadic)
        ins_expr = f"({', '.join(ins)},) + {variadic}" if ins else variadic
    else:
        ins_expr = f"({', '.join(ins)},)" if ins else "()"
    kw, attrs = [], []
    for j, (aname, _, default, has_default, _) in enumerate(s["attrs"]):
        p = _ident(aname)
        if p in used or p == "out":
            p = p + "_"
        used.add(p)
        if has_default:
            ns[f"_d{j}"] = default
            kw.append(f"{p}=_d{j}")
        else:
            kw.append(p)
        attrs.append(p)
    kw_sep = [] if variadic else ["*"]  # after *inputs, keywords are keyword-only already
    sig = ", ".join(params + kw_sep + kw + ["out=None"])
    attrs_expr = f"({', '.join(attrs)},)" if attrs else "()"
    pyname = _ident(name)
    src = f"def {pyname}({sig}):\n    return _fn({ins_expr}, {attrs_expr}, out)\n"
    exec(compile(src, f"<ops_nn.functional.{pyname}>", "exec"), ns)
    f = ns[pyname]
    f.__doc__ = _doc(s)
    f.__module__ = __name__
    f.__qualname__ = pyname
    return pyname, f


def _refresh():
    """Adds a function for every registered op not generated yet."""
    g = globals()
    for name in _core.op_names():
        if name in _generated:
            continue
        pyname, f = _make(name)
        g[pyname] = f
        _generated[name] = pyname



def __getattr__(name):
    # An op registered after the last refresh by other means (a plugin that
    # C++ code loaded): generate it on first access.
    if not name.startswith("__"):
        _refresh()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module 'ops_nn.functional' has no attribute '{name}' (no such op)")
