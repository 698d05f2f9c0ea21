// TensorProto <-> Tensor: typed fields, raw_data and external-data files.
#include <cstring>
#include <fstream>
#include <limits>

#include "graph/onnx/onnx_map.h"
#include "opsnn/error.h"
#include "opsnn/onnx.h"

namespace opsnn::onnx {

DType dtype_from_onnx(int32_t t, const std::string& what) {
  using P = ::onnx::TensorProto;
  switch (t) {
    case P::FLOAT:
      return DType::f32;
    case P::FLOAT16:
      return DType::f16;
    case P::BFLOAT16:
      return DType::bf16;
    case P::INT8:
      return DType::i8;
    case P::UINT8:
      return DType::u8;
    case P::INT32:
      return DType::i32;
    case P::INT64:
      return DType::i64;
    case P::BOOL:
      return DType::boolean;
    default:
      break;
  }
  std::string name = P::DataType_IsValid(t) ? P::DataType_Name(static_cast<P::DataType>(t))
                                            : "unknown (" + std::to_string(t) + ")";
  throw Error("onnx", what,
              "element type FLOAT, FLOAT16, BFLOAT16, INT8, UINT8, INT32, INT64 or BOOL", name);
}

int32_t onnx_elem_type(DType t) {
  using P = ::onnx::TensorProto;
  switch (t) {
    case DType::f32:
      return P::FLOAT;
    case DType::f16:
      return P::FLOAT16;
    case DType::bf16:
      return P::BFLOAT16;
    case DType::i8:
      return P::INT8;
    case DType::u8:
      return P::UINT8;
    case DType::i32:
      return P::INT32;
    case DType::i64:
      return P::INT64;
    case DType::boolean:
      return P::BOOL;
  }
  return P::UNDEFINED;
}

namespace {

std::string read_external(const ::onnx::TensorProto& p, const std::string& base_dir,
                          const std::string& what, size_t nbytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      throw Error("onnx", what + " external_data '" + kv.key() + "'", "an integer", kv.value());
    }
  }
  if (base_dir.empty())
    throw Error("onnx", what, "data inside the model (no folder to read external data from)",
                "external data '" + location + "'");
  if (location.empty() || location.find("..") != std::string::npos || location[0] == '/')
    throw Error("onnx", what + " external_data location", "a file name under the model's folder",
                "'" + location + "'");
  if (offset < 0 || (length >= 0 && static_cast<size_t>(length) != nbytes))
    throw Error("onnx", what + " external_data", "offset >= 0, length " + std::to_string(nbytes),
                "offset " + std::to_string(offset) + ", length " + std::to_string(length));
  std::ifstream f(base_dir + "/" + location, std::ios::binary);
  if (!f)
    throw Error("onnx", what + " external data file", "a readable file", base_dir + "/" + location);
  f.seekg(0, std::ios::end);
  const auto size = static_cast<int64_t>(f.tellg());
  if (size < offset || static_cast<size_t>(size - offset) < nbytes)
    throw Error("onnx", what + " external data file '" + location + "'",
                std::to_string(offset + static_cast<int64_t>(nbytes)) + " bytes",
                std::to_string(size));
  std::string buf(nbytes, '\0');
  f.seekg(offset);
  f.read(buf.data(), static_cast<std::streamsize>(nbytes));
  return buf;
}

template <class Field, class T>
void fill_typed(const Field& field, Tensor& t, const std::string& what, const char* fname) {
  if (static_cast<int64_t>(field.size()) != t.numel())
    throw Error("onnx", what + " " + fname, std::to_string(t.numel()) + " values",
                std::to_string(field.size()));
  T* d = t.data_as<T>();
  for (int i = 0; i < field.size(); ++i) d[i] = static_cast<T>(field.Get(i));
}

}  // namespace

Tensor tensor_from_proto(const ::onnx::TensorProto& p, const std::string& base_dir,
                         const std::string& what) {
  if (p.has_segment()) throw Error("onnx", what, "an unsegmented tensor", "a segment");
  const DType dt = dtype_from_onnx(p.data_type(), what);
  Shape shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw Error("onnx", what + " dims", "non-negative dims", shape_str(shape));
  const int64_t n = shape_numel(shape, dtype_size(dt));  // throws on overflow
  const size_t nbytes = static_cast<size_t>(n) * dtype_size(dt);
  if (nbytes > (size_t{1} << 36))
    throw Error("onnx", what, "at most 64 GiB", std::to_string(nbytes) + " bytes");
  const bool external = p.data_location() == ::onnx::TensorProto::EXTERNAL;
  if (!external && p.has_raw_data() && p.raw_data().size() != nbytes)
    throw Error("onnx", what + " raw_data",
                std::to_string(nbytes) + " bytes for " + shape_str(shape),
                std::to_string(p.raw_data().size()) + " bytes");
  // The data must be there before anything is allocated: a corrupt file may
  // claim any shape.
  if (!external && !p.has_raw_data()) {
    int64_t count = 0;
    switch (dt) {
      case DType::f32:
        count = p.float_data_size();
        break;
      case DType::i64:
        count = p.int64_data_size();
        break;
      default:
        count = p.int32_data_size();
        break;
    }
    if (count != n)
      throw Error("onnx", what, std::to_string(n) + " values for " + shape_str(shape),
                  std::to_string(count) + " values");
  }
  if (external) {
    const std::string buf = read_external(p, base_dir, what, nbytes);
    Tensor t = Tensor::empty(shape, dt);
    if (nbytes) std::memcpy(t.data(), buf.data(), nbytes);
    return t;
  }
  Tensor t = Tensor::zeros(shape, dt);
  if (p.has_raw_data()) {
    if (nbytes) std::memcpy(t.data(), p.raw_data().data(), nbytes);
    return t;
  }
  switch (dt) {
    case DType::f32:
      fill_typed<decltype(p.float_data()), float>(p.float_data(), t, what, "float_data");
      break;
    case DType::i64:
      fill_typed<decltype(p.int64_data()), int64_t>(p.int64_data(), t, what, "int64_data");
      break;
    case DType::i32:
      fill_typed<decltype(p.int32_data()), int32_t>(p.int32_data(), t, what, "int32_data");
      break;
    case DType::i8:
      fill_typed<decltype(p.int32_data()), int8_t>(p.int32_data(), t, what, "int32_data");
      break;
    case DType::u8:
      fill_typed<decltype(p.int32_data()), uint8_t>(p.int32_data(), t, what, "int32_data");
      break;
    case DType::boolean:
      fill_typed<decltype(p.int32_data()), bool>(p.int32_data(), t, what, "int32_data");
      break;
    case DType::f16:
    case DType::bf16: {  // 16-bit patterns stored in int32_data
      if (static_cast<int64_t>(p.int32_data_size()) != n)
        throw Error("onnx", what + " int32_data", std::to_string(n) + " values",
                    std::to_string(p.int32_data_size()));
      auto* d = t.data_as<uint16_t>();
      for (int64_t i = 0; i < n; ++i)
        d[i] = static_cast<uint16_t>(p.int32_data(static_cast<int>(i)));
      break;
    }
  }
  return t;
}

Tensor parse_tensor(const void* data, size_t size) {
  ::onnx::TensorProto p;
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !p.ParseFromArray(data, static_cast<int>(size)))
    throw Error("onnx", "tensor file", "a TensorProto", "bytes that do not parse as one");
  return tensor_from_proto(p, "", "tensor '" + p.name() + "'");
}

Tensor read_tensor(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("onnx", "tensor file", "a readable file", path);
  std::string buf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  try {
    return parse_tensor(buf.data(), buf.size());
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (in " + path + ")");
  }
}

void write_tensor(const std::string& path, const Tensor& t, const std::string& name) {
  ::onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(onnx_elem_type(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  const Tensor c = t.contiguous();
  p.set_raw_data(std::string(static_cast<const char*>(c.data()), c.nbytes()));
  std::ofstream f(path, std::ios::binary);
  if (!f || !p.SerializeToOstream(&f)) throw Error("onnx", "output file", "a writable file", path);
}

}  // namespace opsnn::onnx
