//===- CudaPlugin.cpp - Loading libdt_runtime_cuda.so ---------------------===//

#include "dt/Runtime/Cuda.h"

#include "absl/strings/str_cat.h"

#include <dlfcn.h>

#include <string>

namespace dt::rt {

absl::StatusOr<const CudaPlugin *> loadCudaPlugin() {
  static absl::StatusOr<const CudaPlugin *> plugin =
      []() -> absl::StatusOr<const CudaPlugin *> {
    // Next to this library first: a build tree or an installed bundle.
    std::string next;
    Dl_info info;
    if (::dladdr(reinterpret_cast<void *>(&loadCudaPlugin), &info) &&
        info.dli_fname) {
      std::string self = info.dli_fname;
      next = self.substr(0, self.rfind('/') + 1) + "libdt_runtime_cuda.so";
    }
    void *handle =
        next.empty() ? nullptr : ::dlopen(next.c_str(), RTLD_NOW | RTLD_GLOBAL);
    std::string firstError = handle || next.empty() ? "" : ::dlerror();
    if (!handle)
      handle = ::dlopen("libdt_runtime_cuda.so", RTLD_NOW | RTLD_GLOBAL);
    if (!handle)
      return absl::FailedPreconditionError(absl::StrCat(
          "the CUDA runtime (libdt_runtime_cuda.so) cannot be loaded: ",
          firstError.empty() ? ::dlerror() : firstError,
          " (it needs the CUDA driver libcuda.so.1, cuBLASLt and NCCL on "
          "the library path)"));
    auto get = reinterpret_cast<const CudaPlugin *(*)()>(
        ::dlsym(handle, "dt_cuda_plugin"));
    if (!get)
      return absl::InternalError(
          "libdt_runtime_cuda.so has no dt_cuda_plugin: rebuild dt");
    return get();
  }();
  return plugin;
}

} // namespace dt::rt
