// Sub-commands of the `opsnn` tool.
#pragma once

#include <CLI/CLI.hpp>

namespace opsnn::cli {
void add_ops_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_run_command(CLI::App& app);  // run, info (ONNX models)
}  // namespace opsnn::cli
