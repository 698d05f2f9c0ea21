// Bulk f32 <-> bf16/f16 conversion, written once over the vec_*.h names.
// Included by convert_{scalar,avx2,avx512}.cc inside their ISA namespace.
template <class T>
void to_f32(const T* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(dst + i, load(src + i));
  if (i < n) store_n(dst + i, load_n(src + i, static_cast<int>(n - i)), static_cast<int>(n - i));
}
template <class T>
void from_f32(const float* src, T* dst, size_t n) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(dst + i, load(src + i));
  if (i < n) store_n(dst + i, load_n(src + i, static_cast<int>(n - i)), static_cast<int>(n - i));
}
inline const ConvertFns kConvertFns = {&to_f32<bf16>, &from_f32<bf16>, &to_f32<f16>,
                                       &from_f32<f16>};
