#include "opsnn/plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>

#include "opsnn/error.h"

namespace opsnn {

void load_plugin(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw Error("plugin", path, "a loadable shared library", dlerror());
  using Entry = void (*)(Registry*);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "opsnn_register_ops"));
  if (!entry)
    throw Error("plugin", path, "an exported opsnn_register_ops(opsnn::Registry*)", "none");
  entry(&Registry::global());
}

void load_plugins_from_env() {
  const char* e = std::getenv("OPSNN_PLUGINS");
  if (!e) return;
  std::stringstream ss(e);
  std::string path;
  while (std::getline(ss, path, ':'))
    if (!path.empty()) load_plugin(path);
}

}  // namespace opsnn
