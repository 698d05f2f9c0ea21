#include "packed.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "opsnn/error.h"
#include "opsnn/gemm.h"
#include "tensors.h"

namespace ops_nn {
namespace nb = nanobind;

void bind_packed(nb::module_& m) {
  nb::class_<opsnn::PackedMatrix>(m, "PackedMatrix",
                                  "A matmul's right operand packed once for the GEMM engine.")
      .def_prop_ro("k", &opsnn::PackedMatrix::k)
      .def_prop_ro("n", &opsnn::PackedMatrix::n)
      .def_prop_ro("bytes", &opsnn::PackedMatrix::bytes)
      .def_prop_ro("kernel", &opsnn::PackedMatrix::kernel)
      .def_prop_ro("gated", &opsnn::PackedMatrix::gated)
      .def("__repr__", [](const opsnn::PackedMatrix& p) {
        return "<ops_nn.PackedMatrix k=" + std::to_string(p.k()) + " n=" + std::to_string(p.n()) +
               " kernel " + p.kernel() + ">";
      });

  m.def(
      "pack_matrix",
      [](nb::handle b, bool transposed, bool gated) {
        opsnn::Tensor t = to_tensor(b, "pack_matrix", "b");
        nb::gil_scoped_release release;
        return opsnn::pack_matrix(t, transposed, gated);
      },
      nb::arg("b"), nb::arg("transposed") = false, nb::arg("gated") = false,
      "Packs b ([K, N], or [N, K] with transposed=True: a linear layer's weight) once; "
      "the packed copy does not refer to b.");

  m.def(
      "matmul_packed",
      [](nb::handle a, const opsnn::PackedMatrix& b, nb::handle bias, const std::string& activation,
         float alpha, nb::handle residual, nb::handle out) -> nb::object {
        if (!b.defined())
          throw opsnn::Error("matmul_packed", "b", "a packed matrix", "an empty one");
        opsnn::Tensor ta = to_tensor(a, "matmul_packed", "a");
        opsnn::Tensor tb, tr;
        opsnn::MatmulEpilogue ep;
        ep.activation = activation;
        ep.alpha = alpha;
        if (!bias.is_none()) {
          tb = to_tensor(bias, "matmul_packed", "bias");
          ep.bias = &tb;
        }
        if (!residual.is_none()) {
          tr = to_tensor(residual, "matmul_packed", "residual");
          ep.residual = &tr;
        }
        opsnn::Shape shape = ta.shape();
        if (shape.empty()) throw opsnn::Error("matmul_packed", "a", "rank >= 1", "rank 0");
        shape.back() = b.gated() ? b.n() / 2 : b.n();
        opsnn::Tensor y;
        if (out.is_none())
          y = opsnn::Tensor::empty(shape, ta.dtype());
        else
          y = to_tensor(out, "matmul_packed", "out");
        {
          nb::gil_scoped_release release;
          opsnn::matmul_packed(ta, b, y, ep);
        }
        if (!out.is_none()) return nb::borrow(out);
        return from_tensor(std::move(y), kind_of(a));
      },
      nb::arg("a"), nb::arg("b"), nb::kw_only(), nb::arg("bias").none() = nb::none(),
      nb::arg("activation") = "none", nb::arg("alpha") = 1.0f,
      nb::arg("residual").none() = nb::none(), nb::arg("out").none() = nb::none(),
      "y = act(alpha * (a @ B) + bias) + residual with B packed by pack_matrix.");
}

}  // namespace ops_nn
