//===- Program.h - An artifact and the program it describes -----*- C++ -*-===//

#ifndef DT_RUNTIME_PROGRAM_H
#define DT_RUNTIME_PROGRAM_H

#include "dt/Runtime/Tensor.h"
#include "dt/Sharding/Placement.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dt::rt {

struct Mesh {
  std::vector<std::string> axisNames;
  std::vector<int64_t> shape;
  /// Number of ranks: 1 for a function with no mesh.
  int64_t size() const;
  /// "dp=2 tp=2", or "(no mesh)".
  std::string str() const;
};

/// One argument or result of an entry, as the global program sees it.
struct TensorSpec {
  int index = 0;
  std::string name; ///< From dt.name; empty when none.
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// One per mesh axis; empty for a function with no mesh (replicated).
  std::vector<Placement> placements;
  /// "argument #0 (x)", "result #1".
  std::string label(absl::string_view kind) const;
};

struct EntrySpec {
  std::string name;
  Mesh mesh;
  std::vector<TensorSpec> args, results;

  /// OK when an MPI job of `processes` runs the entry's mesh, one process
  /// per rank; otherwise the error that says how to start it.
  absl::Status checkMpiWorld(int64_t processes) const;
};

/// Where an artifact's entries run: host buffers or device buffers.
enum class TargetKind { CPU, CUDA };

struct ProgramSpec {
  TargetKind target = TargetKind::CPU;
  std::vector<EntrySpec> entries;
  const EntrySpec *find(absl::string_view name) const;
};

/// Parses the description text an artifact carries (docs/Runtime.md).
absl::StatusOr<ProgramSpec> parseDescription(absl::string_view text);

/// A loaded artifact: `void entry(void **buffers)` per entry and program.
class Artifact {
public:
  using EntryFn = void (*)(void **);

  static absl::StatusOr<std::unique_ptr<Artifact>> open(const std::string &path);
  ~Artifact();

  const ProgramSpec &spec() const { return spec_; }
  /// The description text the artifact carries.
  const std::string &description() const { return description_; }
  /// The SPMD entry (`dt_spmd_<name>`) or the reference entry (`dt_ref_<name>`).
  absl::StatusOr<EntryFn> spmdEntry(absl::string_view name) const;
  absl::StatusOr<EntryFn> referenceEntry(absl::string_view name) const;
  /// The reference spelled in f64 (`dt_wide_<name>`, CPU code, taking f64
  /// buffers for the float arguments and results): NotFound unless the
  /// artifact was compiled with --wide-reference.
  absl::StatusOr<EntryFn> wideReferenceEntry(absl::string_view name) const;
  /// The unit roundoff of the narrowest float that result `result` of
  /// `entry` is computed through (`dt_unit_roundoffs_<entry>`, written with
  /// the f64 reference), or else of the narrowest float the program holds
  /// a value in (`dt_unit_roundoff`); none without the f64 reference.
  std::optional<double> unitRoundoff(const std::string &entry,
                                     size_t result) const;

private:
  Artifact(void *handle, std::string path, std::string description,
           ProgramSpec spec)
      : handle_(handle), path_(std::move(path)),
        description_(std::move(description)), spec_(std::move(spec)) {}
  absl::StatusOr<EntryFn> lookup(const std::string &symbol) const;

  void *handle_;
  std::string path_;
  std::string description_;
  ProgramSpec spec_;
};

} // namespace dt::rt

#endif // DT_RUNTIME_PROGRAM_H
