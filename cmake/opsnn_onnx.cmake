# The ONNX importer: onnx.proto compiled from the Debian package's copy
# (python3-onnx ships it), the importer in src/graph/onnx/. A static library
# that does not pick an opsnn flavour: link opsnn or opsnn_static beside it.
find_package(Protobuf REQUIRED)
find_file(OPSNN_ONNX_PROTO onnx.proto
  PATHS /usr/lib/python3/dist-packages/onnx /usr/share/onnx /usr/include/onnx
  NO_DEFAULT_PATH
  DOC "onnx.proto (Debian: python3-onnx)")
if(NOT OPSNN_ONNX_PROTO)
  message(FATAL_ERROR "onnx.proto not found: install python3-onnx (scripts/setup.sh does)")
endif()
get_filename_component(_onnx_proto_dir ${OPSNN_ONNX_PROTO} DIRECTORY)
set(_onnx_gen ${CMAKE_CURRENT_BINARY_DIR}/onnx_proto)
file(MAKE_DIRECTORY ${_onnx_gen}/onnx)
add_custom_command(
  OUTPUT ${_onnx_gen}/onnx/onnx.pb.cc ${_onnx_gen}/onnx/onnx.pb.h
  COMMAND ${CMAKE_COMMAND} -E copy ${OPSNN_ONNX_PROTO} ${_onnx_gen}/onnx/onnx.proto
  COMMAND protobuf::protoc --cpp_out=${_onnx_gen} -I${_onnx_gen} ${_onnx_gen}/onnx/onnx.proto
  DEPENDS ${OPSNN_ONNX_PROTO}
  COMMENT "protoc onnx.proto")
add_library(opsnn_onnx_proto STATIC ${_onnx_gen}/onnx/onnx.pb.cc)
target_include_directories(opsnn_onnx_proto SYSTEM PUBLIC ${_onnx_gen})
target_link_libraries(opsnn_onnx_proto PUBLIC protobuf::libprotobuf)
target_compile_options(opsnn_onnx_proto PRIVATE -w)

file(GLOB OPSNN_ONNX_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/graph/onnx/*.cc)
add_library(opsnn_onnx STATIC ${OPSNN_ONNX_SOURCES})
target_include_directories(opsnn_onnx
  PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(opsnn_onnx PUBLIC opsnn_onnx_proto)
# Linked into the Python extension (a shared module) as well as into executables.
set_target_properties(opsnn_onnx_proto opsnn_onnx PROPERTIES POSITION_INDEPENDENT_CODE ON)
