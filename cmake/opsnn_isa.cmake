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
set(OPSNN_FLAGS_AVXVNNI "${OPSNN_FLAGS_AVX2} -mavxvnni")
set(OPSNN_FLAGS_AVX512VNNI "${OPSNN_FLAGS_AVX512} -mavx512vnni")

function(opsnn_set_isa_flags sources)
  foreach(src IN LISTS sources)
    if(src MATCHES "_avx512bf16\\.cc$")
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
