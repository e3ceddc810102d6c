//===- Program.cpp - Artifacts and their descriptions ---------------------===//

#include "dt/Runtime/Program.h"
#include "dt/runtime.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>

namespace dt::rt {

int64_t Mesh::size() const { return numElements(shape); }

std::string Mesh::str() const {
  if (shape.empty())
    return "(no mesh)";
  std::vector<std::string> parts;
  for (size_t i = 0; i < shape.size(); ++i)
    parts.push_back(absl::StrCat(axisNames[i], "=", shape[i]));
  return absl::StrJoin(parts, " ");
}

std::string TensorSpec::label(absl::string_view kind) const {
  return name.empty() ? absl::StrCat(kind, " #", index)
                      : absl::StrCat(kind, " #", index, " (", name, ")");
}

absl::Status EntrySpec::checkMpiWorld(int64_t processes) const {
  if (processes == mesh.size())
    return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "entry ", name, " runs on the mesh ", mesh.str(), " of ", mesh.size(),
      " ranks, but the MPI job has ", processes,
      processes == 1 ? " process (not started by mpirun?)" : " processes",
      ": run it with mpirun -np ", mesh.size()));
}

const EntrySpec *ProgramSpec::find(absl::string_view name) const {
  for (const EntrySpec &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

namespace {
absl::Status malformed(int line, absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "malformed program description, line ", line, " (\"", text, "\"): ", why));
}

absl::StatusOr<TensorSpec> parseTensor(const std::vector<absl::string_view> &w,
                                       const Mesh &mesh, int line,
                                       absl::string_view text) {
  if (w.size() != 6)
    return malformed(line, text, "expected KIND INDEX NAME DTYPE SHAPE PLACEMENTS");
  TensorSpec spec;
  if (!absl::SimpleAtoi(w[1], &spec.index))
    return malformed(line, text, "bad index");
  if (w[2] != "-")
    spec.name = std::string(w[2]);
  std::optional<DType> dtype = parseDType(w[3]);
  if (!dtype)
    return malformed(line, text, "unknown dtype");
  spec.dtype = *dtype;
  if (w[4] != "scalar")
    for (absl::string_view d : absl::StrSplit(w[4], 'x')) {
      int64_t extent;
      if (!absl::SimpleAtoi(d, &extent) || extent < 0)
        return malformed(line, text, "bad shape");
      spec.shape.push_back(extent);
    }
  if (w[5] != "-")
    for (absl::string_view p : absl::StrSplit(w[5], ',')) {
      std::optional<Placement> placement =
          parsePlacement(std::string_view(p.data(), p.size()));
      if (!placement ||
          (placement->isShard() &&
           placement->dim() >= static_cast<int64_t>(spec.shape.size())))
        return malformed(line, text, "bad placement");
      spec.placements.push_back(*placement);
    }
  if (!spec.placements.empty() && spec.placements.size() != mesh.shape.size())
    return malformed(line, text, "one placement per mesh axis expected");
  return spec;
}
} // namespace

absl::StatusOr<ProgramSpec> parseDescription(absl::string_view text) {
  ProgramSpec program;
  EntrySpec *entry = nullptr;
  int number = 0;
  bool header = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++number;
    std::vector<absl::string_view> w =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (w.empty())
      continue;
    if (!header) {
      int version;
      if (w.size() != 2 || w[0] != "dt-program" ||
          !absl::SimpleAtoi(w[1], &version))
        return malformed(number, line, "expected \"dt-program VERSION\"");
      if (version != DT_ABI_VERSION)
        return absl::FailedPreconditionError(absl::StrCat(
            "the artifact has ABI version ", version, "; this runtime reads ",
            DT_ABI_VERSION, ": recompile it with this dt-compile"));
      header = true;
      continue;
    }
    if (w[0] == "target" && w.size() == 2 && program.entries.empty()) {
      if (w[1] == "cpu")
        program.target = TargetKind::CPU;
      else if (w[1] == "cuda")
        program.target = TargetKind::CUDA;
      else
        return malformed(number, line,
                         "expected \"target cpu\" or \"target cuda\"");
    } else if (w[0] == "entry" && w.size() == 2) {
      program.entries.emplace_back();
      entry = &program.entries.back();
      entry->name = std::string(w[1]);
    } else if (!entry) {
      return malformed(number, line, "expected \"entry NAME\"");
    } else if (w[0] == "mesh") {
      for (size_t i = 1; i < w.size(); ++i) {
        std::pair<absl::string_view, absl::string_view> axis =
            absl::StrSplit(w[i], '=');
        int64_t size;
        if (!absl::SimpleAtoi(axis.second, &size) || size <= 0)
          return malformed(number, line, "bad mesh axis");
        entry->mesh.axisNames.emplace_back(axis.first);
        entry->mesh.shape.push_back(size);
      }
    } else if (w[0] == "arg" || w[0] == "result") {
      absl::StatusOr<TensorSpec> spec = parseTensor(w, entry->mesh, number, line);
      if (!spec.ok())
        return spec.status();
      (w[0] == "arg" ? entry->args : entry->results).push_back(*spec);
    } else if (w[0] == "end") {
      entry = nullptr;
    } else {
      return malformed(number, line, "unknown line");
    }
  }
  if (!header)
    return absl::InvalidArgumentError("empty program description");
  return program;
}

/// Whether the 64-bit ELF file `file` holds every byte its headers point
/// at. dlopen maps a truncated shared object (an interrupted copy) without
/// complaint and then faults reading the missing pages, which would look
/// like the program crashing. Anything that is not a 64-bit ELF file is
/// left to dlopen's own error.
static absl::Status checkComplete(const std::string &path,
                                  const std::string &file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in)
    return absl::OkStatus();
  uint64_t size = static_cast<uint64_t>(in.tellg());
  Elf64_Ehdr header;
  in.seekg(0);
  if (!in.read(reinterpret_cast<char *>(&header), sizeof(header)) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64)
    return absl::OkStatus();
  uint64_t needed = std::max<uint64_t>(
      header.e_phoff + uint64_t{header.e_phnum} * header.e_phentsize,
      header.e_shoff + uint64_t{header.e_shnum} * header.e_shentsize);
  if (needed <= size && header.e_phentsize == sizeof(Elf64_Phdr)) {
    in.seekg(header.e_phoff);
    for (int i = 0; i < header.e_phnum; ++i) {
      Elf64_Phdr segment;
      if (!in.read(reinterpret_cast<char *>(&segment), sizeof(segment)))
        break;
      if (segment.p_type == PT_LOAD)
        needed = std::max(needed, segment.p_offset + segment.p_filesz);
    }
  }
  if (needed <= size)
    return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "cannot load artifact ", path, ": the file is truncated (", size,
      " bytes; its ELF headers need ", needed,
      "): copied or written incompletely? Build it again with dt-compile"));
}

absl::StatusOr<std::unique_ptr<Artifact>>
Artifact::open(const std::string &path) {
  // RTLD_NOW: an unresolved runtime function is an error now, not a crash
  // in the middle of a step.
  // dlopen searches the library path for a bare name; a path is a file.
  std::string file = absl::StrContains(path, '/') ? path : "./" + path;
  if (absl::Status s = checkComplete(path, file); !s.ok())
    return s;
  void *handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string error = ::dlerror();
    if (absl::StrContains(error, "mgpu") ||
        absl::StrContains(error, "dt_rt_gpu"))
      return absl::FailedPreconditionError(
          absl::StrCat("cannot load artifact ", path,
                       ": it is a CUDA artifact, which "
                       "runs with dt-run --backend=nccl (",
                       error, ")"));
    return absl::NotFoundError(
        absl::StrCat("cannot load artifact ", path, ": ", error));
  }
  auto version = reinterpret_cast<int32_t (*)()>(::dlsym(handle, "dt_abi_version"));
  auto describe = reinterpret_cast<const char *(*)()>(
      ::dlsym(handle, "dt_program_description"));
  if (!version || !describe) {
    ::dlclose(handle);
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is not a dt artifact (no dt_program_description): build it "
              "with dt-compile"));
  }
  absl::StatusOr<ProgramSpec> spec = parseDescription(describe());
  if (!spec.ok()) {
    ::dlclose(handle);
    return absl::Status(spec.status().code(),
                        absl::StrCat(path, ": ", spec.status().message()));
  }
  return std::unique_ptr<Artifact>(
      new Artifact(handle, path, describe(), std::move(*spec)));
}

Artifact::~Artifact() { ::dlclose(handle_); }

absl::StatusOr<Artifact::EntryFn>
Artifact::lookup(const std::string &symbol) const {
  void *fn = ::dlsym(handle_, symbol.c_str());
  if (!fn)
    return absl::NotFoundError(
        absl::StrCat(path_, " has no symbol ", symbol));
  return reinterpret_cast<EntryFn>(fn);
}

absl::StatusOr<Artifact::EntryFn>
Artifact::spmdEntry(absl::string_view name) const {
  return lookup(absl::StrCat("dt_spmd_", name));
}

absl::StatusOr<Artifact::EntryFn>
Artifact::referenceEntry(absl::string_view name) const {
  return lookup(absl::StrCat("dt_ref_", name));
}

absl::StatusOr<Artifact::EntryFn>
Artifact::wideReferenceEntry(absl::string_view name) const {
  return lookup(absl::StrCat("dt_wide_", name));
}

std::optional<double> Artifact::unitRoundoff(const std::string &entry,
                                             size_t result) const {
  // One per result of the entry, which the description lists (dt-run asks
  // for those only).
  if (void *units =
          ::dlsym(handle_, absl::StrCat("dt_unit_roundoffs_", entry).c_str()))
    return static_cast<const double *>(units)[result];
  void *fn = ::dlsym(handle_, "dt_unit_roundoff");
  if (!fn)
    return std::nullopt;
  return reinterpret_cast<double (*)()>(fn)();
}

} // namespace dt::rt
