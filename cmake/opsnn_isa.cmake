# Per-file ISA flags, chosen by the file name's suffix. The portable build has
# no ISA flags at all; dispatch picks among these at run time from CPUID.
set(OPSNN_FLAGS_AVX2 "-mavx2 -mfma -mf16c -mbmi2")
set(OPSNN_FLAGS_AVX512 "${OPSNN_FLAGS_AVX2} -mavx512f -mavx512bw -mavx512vl -mavx512dq")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 warns inside its own avx512fintrin.h (_mm512_undefined_*); clang
  # knows no -Wmaybe-uninitialized.
  string(APPEND OPSNN_FLAGS_AVX512 " -Wno-maybe-uninitialized -Wno-uninitialized")
endif()
set(OPSNN_FLAGS_AVX512BF16 "${OPSNN_FLAGS_AVX512} -mavx512bf16 -mavx512vnni")
set(OPSNN_FLAGS_AMX "${OPSNN_FLAGS_AVX512BF16} -mamx-tile -mamx-bf16")
set(OPSNN_FLAGS_AVXVNNI "${OPSNN_FLAGS_AVX2} -mavxvnni")
set(OPSNN_FLAGS_AVX512VNNI "${OPSNN_FLAGS_AVX512} -mavx512vnni")

# Only kernel files may carry an ISA suffix (a `kernels/` folder, or the
# profiler's limit probes): every inline function and template a file
# instantiates is emitted with its flags, and the linker may keep that copy
# for the whole library, so host code compiled with AVX-512 flags runs
# AVX-512 instructions on AVX2-only CPUs (the op-level src/ops/conv/conv_amx.cc
# did: Illegal instruction on an AMD Zen 3 in the sanitizer build).
function(opsnn_set_isa_flags sources)
  foreach(src IN LISTS sources)
    if(src MATCHES "_(amx|avx512bf16|avx512vnni|avx512|avxvnni|avx2)\\.cc$" AND
       NOT src MATCHES "/kernels/" AND NOT src MATCHES "/profile/limits_")
      message(FATAL_ERROR "${src}: an ISA suffix outside a kernels/ folder (host code "
                          "would be compiled with that ISA's flags)")
    endif()
    if(src MATCHES "_amx\\.cc$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${OPSNN_FLAGS_AMX}")
    elseif(src MATCHES "_avx512bf16\\.cc$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${OPSNN_FLAGS_AVX512BF16}")
    elseif(src MATCHES "_avx512vnni\\.cc$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${OPSNN_FLAGS_AVX512VNNI}")
    elseif(src MATCHES "_avx512\\.cc$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${OPSNN_FLAGS_AVX512}")
    elseif(src MATCHES "_avxvnni\\.cc$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${OPSNN_FLAGS_AVXVNNI}")
    elseif(src MATCHES "_avx2\\.cc$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${OPSNN_FLAGS_AVX2}")
    endif()
  endforeach()
endfunction()
