// opsnn: list, check and benchmark the library's operators; run ONNX models.
#include <cstdio>

#include "commands.h"
#include "opsnn/opsnn.h"
#include "opsnn/plugin.h"

int main(int argc, char** argv) {
  CLI::App app{"opsnn: operators for AIGC inference on x86-64 (version " +
               std::string(opsnn::version()) + ")"};
  app.require_subcommand(1);
  std::vector<std::string> plugins;
  app.add_option("--plugin", plugins,
                 "Load a shared library that registers custom ops (repeatable; also OPSNN_PLUGINS)")
      ->each([](const std::string& p) { opsnn::load_plugin(p); });
  opsnn::cli::add_ops_command(app);
  opsnn::cli::add_check_command(app);
  opsnn::cli::add_bench_command(app);
  opsnn::cli::add_run_command(app);
  try {
    opsnn::load_plugins_from_env();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const opsnn::Error& e) {
    std::fprintf(stderr, "opsnn: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // out of memory, a system error: still exit 2, no abort
    std::fprintf(stderr, "opsnn: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
