//===- HostApi.cpp - The C edge of the host API ---------------------------===//
//
// absl::Status inside, a code and a message at the edge.
//
//===----------------------------------------------------------------------===//

#include "dt/Runtime/Job.h"
#include "dt/Runtime/Program.h"
#include "dt/runtime.h"

#include "absl/strings/str_cat.h"

#include <string>

struct DtArtifact {
  std::unique_ptr<dt::rt::Artifact> artifact;
};

namespace {
thread_local std::string lastError;

int32_t report(const absl::Status &status) {
  lastError = std::string(status.message());
  return static_cast<int32_t>(status.code());
}
} // namespace

extern "C" {
int32_t dt_artifact_open(const char *path, DtArtifact **artifact) {
  if (!path || !artifact)
    return report(absl::InvalidArgumentError("dt_artifact_open: null argument"));
  absl::StatusOr<std::unique_ptr<dt::rt::Artifact>> opened =
      dt::rt::Artifact::open(path);
  if (!opened.ok())
    return report(opened.status());
  *artifact = new DtArtifact{std::move(*opened)};
  return report(absl::OkStatus());
}

void dt_artifact_close(DtArtifact *artifact) { delete artifact; }

const char *dt_artifact_description(const DtArtifact *artifact) {
  return artifact ? artifact->artifact->description().c_str() : "";
}

int32_t dt_run_threads(const DtArtifact *artifact, const char *entry,
                       void ***buffers, double timeoutSeconds) {
  if (!artifact || !entry || !buffers || !(timeoutSeconds > 0))
    return report(absl::InvalidArgumentError(
        "dt_run_threads: null argument or a timeout that is not positive"));
  const dt::rt::EntrySpec *spec = artifact->artifact->spec().find(entry);
  if (!spec)
    return report(absl::NotFoundError(
        absl::StrCat("the artifact has no entry '", entry, "'")));
  absl::StatusOr<dt::rt::Artifact::EntryFn> fn =
      artifact->artifact->spmdEntry(entry);
  if (!fn.ok())
    return report(fn.status());
  size_t count = spec->args.size() + spec->results.size();
  std::vector<std::vector<void *>> ranks;
  for (int64_t r = 0; r < spec->mesh.size(); ++r)
    ranks.emplace_back(buffers[r], buffers[r] + count);
  dt::rt::RunOptions options;
  options.timeout = absl::Seconds(timeoutSeconds);
  absl::StatusOr<dt::rt::RunStats> run =
      dt::rt::runThreads(*fn, *spec, ranks, options);
  return report(run.status());
}

const char *dt_last_error(void) { return lastError.c_str(); }
}
