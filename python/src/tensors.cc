#include "tensors.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "numpy_fast.h"
#include "opsnn/error.h"

namespace ops_nn {
namespace {

namespace dl = nb::dlpack;

struct Types {
  nb::object numpy, ndarray_type, uint16, bfloat16;  // numpy module, its types, ml_dtypes.bfloat16
  nb::object torch_tensor, torch_from_numpy;         // torch.Tensor, torch.from_numpy
  bool torch_looked_up = false;
};
Types* types = nullptr;  // leaked on purpose: never decref'ed after the interpreter ends

// ml_dtypes.bfloat16, imported on first use (the import is slow and most
// programs never need NumPy bfloat16).
nb::handle bfloat16_dtype() {
  if (!types->bfloat16.is_valid())
    types->bfloat16 =
        types->numpy.attr("dtype")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
  return types->bfloat16;
}

PyObject* torch_tensor_type() {
  if (!types->torch_looked_up) {
    nb::dict mods = nb::borrow<nb::dict>(PyImport_GetModuleDict());
    if (!mods.contains("torch")) return nullptr;
    types->torch_tensor = nb::getattr(mods["torch"], "Tensor", nb::none());
    types->torch_from_numpy = nb::getattr(mods["torch"], "from_numpy", nb::none());
    types->torch_looked_up = true;
  }
  return types->torch_tensor.is_none() ? nullptr : types->torch_tensor.ptr();
}

bool is_torch(nb::handle obj) {
  PyObject* t = torch_tensor_type();
  return t && PyObject_IsInstance(obj.ptr(), t) == 1;
}

bool dtype_from_dl(dl::dtype d, opsnn::DType* out) {
  using opsnn::DType;
  if (d.lanes != 1) return false;
  const auto code = static_cast<dl::dtype_code>(d.code);
  switch (code) {
    case dl::dtype_code::Float:
      if (d.bits == 32)
        *out = DType::f32;
      else if (d.bits == 16)
        *out = DType::f16;
      else
        return false;
      return true;
    case dl::dtype_code::Bfloat:
      if (d.bits != 16) return false;
      *out = DType::bf16;
      return true;
    case dl::dtype_code::Int:
      if (d.bits == 8)
        *out = DType::i8;
      else if (d.bits == 32)
        *out = DType::i32;
      else if (d.bits == 64)
        *out = DType::i64;
      else
        return false;
      return true;
    case dl::dtype_code::UInt:
      if (d.bits != 8) return false;
      *out = DType::u8;
      return true;
    case dl::dtype_code::Bool:
      if (d.bits != 8) return false;
      *out = DType::boolean;
      return true;
    default:
      return false;
  }
}

dl::dtype dl_of(opsnn::DType t) {
  using opsnn::DType;
  switch (t) {
    case DType::f32:
      return nb::dtype<float>();
    case DType::f16:
      return {static_cast<uint8_t>(dl::dtype_code::Float), 16, 1};
    case DType::bf16:
      return {static_cast<uint8_t>(dl::dtype_code::Bfloat), 16, 1};
    case DType::i8:
      return nb::dtype<int8_t>();
    case DType::u8:
      return nb::dtype<uint8_t>();
    case DType::i32:
      return nb::dtype<int32_t>();
    case DType::i64:
      return nb::dtype<int64_t>();
    case DType::boolean:
      return nb::dtype<bool>();
  }
  return nb::dtype<float>();
}

std::string py_type_name(nb::handle obj) {
  return nb::borrow<nb::str>(nb::type_name(obj.type())).c_str();
}

// str(x) (nb::str(handle) only borrows; it does not convert).
std::string str_of(nb::handle h) { return nb::steal<nb::str>(PyObject_Str(h.ptr())).c_str(); }

[[noreturn]] void not_a_tensor(nb::handle obj, const std::string& op, const std::string& arg) {
  if (is_torch(obj)) {
    if (nb::cast<bool>(obj.attr("requires_grad")))
      throw opsnn::Error(op, arg, "a tensor that does not require grad (ops_nn has no autograd)",
                         "requires_grad=True (pass x.detach())");
    const std::string dev = str_of(obj.attr("device"));
    if (dev.rfind("cpu", 0) != 0) throw opsnn::Error(op, arg, "a CPU tensor", "device " + dev);
    throw opsnn::Error(op, arg, "a torch tensor of a supported dtype", str_of(obj.attr("dtype")));
  }
  if (Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(types->ndarray_type.ptr()))
    throw opsnn::Error(op, arg,
                       "an array of dtype float32/float16/bfloat16/int8/uint8/int32/int64/bool",
                       "dtype " + str_of(obj.attr("dtype")));
  throw opsnn::Error(op, arg, "a NumPy array, a torch CPU tensor or an object with __dlpack__",
                     py_type_name(obj));
}

}  // namespace

void init_tensor_types() {
  if (!numpy_fast_init()) throw nb::python_error();
  types = new Types();
  types->numpy = nb::module_::import_("numpy");
  types->ndarray_type = types->numpy.attr("ndarray");
  types->uint16 = types->numpy.attr("dtype")("uint16");
}

Kind kind_of(nb::handle obj) {
  if (Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(types->ndarray_type.ptr()))
    return Kind::numpy;
  return is_torch(obj) ? Kind::torch : Kind::numpy;
}

// The opsnn view of an imported array (bf16_view: uint16 memory holding bf16).
opsnn::Tensor wrap_array(const nb::ndarray<nb::ro>& a, nb::handle obj, const std::string& op,
                         const std::string& arg, bool bf16_view) {
  if (a.device_type() != nb::device::cpu::value)
    throw opsnn::Error(op, arg, "a CPU tensor", "device type " + std::to_string(a.device_type()));
  opsnn::DType dt;
  if (bf16_view)
    dt = opsnn::DType::bf16;
  else if (!dtype_from_dl(a.dtype(), &dt))
    not_a_tensor(obj, op, arg);
  const size_t rank = a.ndim();
  opsnn::Shape shape(rank);
  opsnn::Strides strides(rank);
  bool contiguous = true;
  int64_t acc = 1;
  for (size_t i = rank; i-- > 0;) {
    shape[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = a.stride(i);
    if (strides[i] < 0)
      throw opsnn::Error(op, arg, "non-negative strides (copy it first, e.g. np.ascontiguousarray)",
                         "strides " + opsnn::shape_str(strides));
    if (shape[i] != 1 && strides[i] != acc) contiguous = false;
    acc *= shape[i];
  }
  if (contiguous) strides.clear();
  // The library only writes through tensors passed as outputs (run_op checks out=).
  return opsnn::Tensor::wrap(const_cast<void*>(a.data()), shape, dt, strides);
}

opsnn::Tensor to_tensor(nb::handle obj, const std::string& op, const std::string& arg,
                        nb::object* keep) {
  nb::ndarray<nb::ro> a;  // read-only arrays too (np.broadcast_to); out= is checked by run_op
  bool bf16_view = false;
  const bool numpy =
      Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(types->ndarray_type.ptr());
  opsnn::Tensor fast;
  if (numpy && numpy_fast_wrap(obj.ptr(), &fast)) return fast;
  if (!numpy && is_torch(obj)) {
    // A CPU tensor's .numpy() view is imported 3-4x faster than its
    // __dlpack__; it refuses bf16, grad-requiring and non-CPU tensors,
    // which take the DLPack path below (and its messages).
    if (nb::cast<bool>(obj.attr("requires_grad"))) not_a_tensor(obj, op, arg);
    PyObject* v = PyObject_CallMethod(obj.ptr(), "numpy", nullptr);
    if (v) {
      nb::object view = nb::steal(v);
      if (numpy_fast_wrap(view.ptr(), &fast)) {
        if (keep) *keep = view;
        return fast;
      }
      if (nb::try_cast(view, a, false)) {
        if (keep) *keep = view;
        return wrap_array(a, obj, op, arg, false);
      }
    } else {
      PyErr_Clear();
    }
  }
  if (!nb::try_cast(obj, a, /*convert=*/false)) {
    // NumPy cannot export ml_dtypes' bfloat16 through the buffer protocol or
    // DLPack: read the same memory as uint16.
    if (Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(types->ndarray_type.ptr()) &&
        obj.attr("dtype").equal(bfloat16_dtype())) {
      nb::object v = obj.attr("view")(types->uint16);
      if (!nb::try_cast(v, a, false)) not_a_tensor(obj, op, arg);
      if (keep) *keep = v;
      bf16_view = true;
    } else {
      not_a_tensor(obj, op, arg);
    }
  }
  return wrap_array(a, obj, op, arg, bf16_view);
}

nb::object from_tensor(opsnn::Tensor t, Kind kind) {
  if (t.dtype() != opsnn::DType::bf16 &&
      (kind == Kind::numpy || !types->torch_from_numpy.is_none())) {
    PyObject* arr = numpy_fast_array(t);
    if (!arr) {
      if (PyErr_Occurred()) throw nb::python_error();
    } else if (kind == Kind::numpy) {
      return nb::steal(arr);
    } else {
      return types->torch_from_numpy(nb::steal(arr));
    }
  }
  auto* owned = new opsnn::Tensor(std::move(t));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<opsnn::Tensor*>(p); });
  const size_t rank = static_cast<size_t>(owned->rank());
  size_t shape[16];
  std::vector<size_t> big;
  size_t* sp = shape;
  if (rank > 16) {
    big.resize(rank);
    sp = big.data();
  }
  for (size_t i = 0; i < rank; ++i) sp[i] = static_cast<size_t>(owned->shape()[i]);
  // Strided tensors (views) keep their strides; contiguous ones pass none.
  const int64_t* st = owned->is_contiguous() ? nullptr : owned->strides().data();
  const opsnn::DType dt = owned->dtype();
  void* data = owned->data();
  if (kind == Kind::torch && dt != opsnn::DType::bf16 && !types->torch_from_numpy.is_none())
    // torch.from_numpy of the NumPy view: 10x cheaper than torch's DLPack import.
    return types->torch_from_numpy(nb::cast(
        nb::ndarray<nb::numpy>(data, rank, sp, owner, st, dl_of(dt)), nb::rv_policy::reference));
  if (kind == Kind::torch)
    return nb::cast(nb::ndarray<nb::pytorch>(data, rank, sp, owner, st, dl_of(dt)),
                    nb::rv_policy::reference);
  if (dt == opsnn::DType::bf16) {
    nb::object u =
        nb::cast(nb::ndarray<nb::numpy>(data, rank, sp, owner, st, nb::dtype<uint16_t>()),
                 nb::rv_policy::reference);
    return u.attr("view")(bfloat16_dtype());
  }
  return nb::cast(nb::ndarray<nb::numpy>(data, rank, sp, owner, st, dl_of(dt)),
                  nb::rv_policy::reference);
}

nb::object numpy_f64(std::vector<double> data, const opsnn::Shape& shape) {
  auto* owned = new std::vector<double>(std::move(data));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  std::vector<size_t> sp(shape.begin(), shape.end());
  return nb::cast(nb::ndarray<nb::numpy, double>(owned->data(), sp.size(), sp.data(), owner),
                  nb::rv_policy::reference);
}

opsnn::DType dtype_from_py(nb::handle obj) {
  if (nb::isinstance<nb::str>(obj)) return opsnn::dtype_from_name(nb::cast<std::string>(obj));
  // numpy dtype objects and types (np.float32, ml_dtypes.bfloat16) and torch dtypes
  // (torch.float32 prints as "torch.float32").
  if (obj.type().ptr() != reinterpret_cast<PyObject*>(&PyType_Type) &&
      nb::hasattr(obj, "itemsize") && nb::hasattr(obj, "name"))
    return opsnn::dtype_from_name(nb::cast<std::string>(obj.attr("name")));
  if (nb::hasattr(obj, "is_floating_point")) {  // torch.dtype
    std::string s = str_of(obj);
    if (s.rfind("torch.", 0) == 0) s = s.substr(6);
    return opsnn::dtype_from_name(s);
  }
  nb::object d = types->numpy.attr("dtype")(obj);
  return opsnn::dtype_from_name(nb::cast<std::string>(d.attr("name")));
}

nb::object dtype_to_numpy(opsnn::DType t) {
  if (t == opsnn::DType::bf16) return nb::borrow(bfloat16_dtype());
  static const char* names[] = {"float32", "float16", "bfloat16", "int8",
                                "uint8",   "int32",   "int64",    "bool"};
  return types->numpy.attr("dtype")(names[static_cast<int>(t)]);
}

}  // namespace ops_nn
