/*===- dt/runtime.h - The C ABI between dt artifacts and the runtime -------===*
 *
 * An artifact written by dt-compile is a shared object that exports
 *
 *   int32_t     dt_abi_version(void);              // DT_ABI_VERSION
 *   const char *dt_program_description(void);      // see docs/Runtime.md
 *   void        dt_spmd_<entry>(void **buffers);   // one rank's program
 *   void        dt_ref_<entry>(void **buffers);    // the whole program, one
 *device
 *   void        dt_wide_<entry>(void **buffers);   // the same in f64
 *                                                  // (--wide-reference)
 *
 * `buffers` holds one pointer per argument, then one per result, each a
 * dense row-major array of the local (SPMD) or global (reference) shape. The
 * caller owns every buffer. The SPMD entry runs on a thread that the runtime
 * has bound to one rank (dt_rt_bind); the generated code finds its rank
 * through that binding when it calls the functions below.
 *
 * The functions the generated code calls take memrefs as MLIR's unranked
 * descriptors (rank, pointer to the ranked descriptor). They never fail
 * visibly: the first error of a job is recorded, every later collective of
 * every rank returns at once, and the host reports the error when the entry
 * returns (docs/Runtime.md, "Failure").
 *
 *===----------------------------------------------------------------------===*/

#ifndef DT_RUNTIME_H
#define DT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DT_ABI_VERSION 4

/* MLIR's ranked memref descriptor: sizes[rank] then strides[rank] follow. */
typedef struct DtMemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
} DtMemRef;

/* Reduction kinds, in the order of the dialect's ReductionKind. */
enum { DT_RED_SUM = 0, DT_RED_AVG = 1, DT_RED_MAX = 2, DT_RED_MIN = 3 };

/* Collectives: `axes` is a bit mask of mesh axes (bit i = axis i); the group
 * is the ranks that agree on every other axis. Uneven pieces are padded to
 * the torch.chunk size. `extent` is the global extent of the gathered or
 * split dim and `outer` the mask of the axes that split it before the group
 * (-1 and 0: derive the pieces from the shapes: full pieces for a gather,
 * torch.chunk pieces of the input's dim for a split). Gathers pack the
 * valid elements first, then zeros; splits zero-pad a short piece. `site`
 * names the collective in the source ("all_gather on [dp] dim 0
 * (model.mlir:12:8)", a constant of the artifact): a profiled run reports
 * its time under that name, beside `model`, the compiler's alpha-beta
 * estimate of one run in seconds (negative: none). An exchange's `layout`
 * ("1024x64 S(0),S(0) R,S(0)": the global shape, the source and the target
 * placements) says which parts each rank receives and sends
 * (dt/Sharding/Exchange.h). */
#define DT_RT_DECLARE_COLLECTIVES(T)                                           \
  void dt_rt_all_reduce_##T(int64_t, DtMemRef *, int64_t, DtMemRef *,          \
                            int32_t axes, int32_t reduction, const char *site, \
                            double model);                                     \
  void dt_rt_all_gather_##T(int64_t, DtMemRef *, int64_t, DtMemRef *,          \
                            int32_t axes, int32_t dim, int32_t extent,         \
                            int32_t outer, const char *site, double model);    \
  void dt_rt_reduce_scatter_##T(int64_t, DtMemRef *, int64_t, DtMemRef *,      \
                                int32_t axes, int32_t reduction, int32_t dim,  \
                                int32_t extent, int32_t outer,                 \
                                const char *site, double model);               \
  void dt_rt_all_to_all_##T(int64_t, DtMemRef *, int64_t, DtMemRef *,          \
                            int32_t axes, int32_t split, int32_t concat,       \
                            int32_t splitExtent, int32_t splitOuter,           \
                            int32_t concatExtent, int32_t concatOuter,         \
                            const char *site, double model);                   \
  void dt_rt_exchange_##T(int64_t, DtMemRef *, int64_t, DtMemRef *,            \
                          int32_t axes, const char *layout, const char *site,  \
                          double model);                                       \
  void dt_rt_local_slice_##T(int64_t, DtMemRef *, int64_t, DtMemRef *,         \
                             int32_t axes, int32_t dim, int32_t extent,        \
                             int32_t outer, const char *site, double model);
DT_RT_DECLARE_COLLECTIVES(f32)
DT_RT_DECLARE_COLLECTIVES(f64)
DT_RT_DECLARE_COLLECTIVES(f16)
DT_RT_DECLARE_COLLECTIVES(bf16)
DT_RT_DECLARE_COLLECTIVES(i32)
DT_RT_DECLARE_COLLECTIVES(i64)
#undef DT_RT_DECLARE_COLLECTIVES

/* Host buffers of CPU artifacts: MLIR's generic allocation functions
 * (finalize-memref-to-llvm{use-generic-functions}). Blocks of 1 MiB or more
 * are cached when freed and reused by later calls (docs/Runtime.md). */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *block);

/* MLIR's unranked memref descriptor. */
typedef struct DtUnrankedMemRef {
  int64_t rank;
  DtMemRef *ranked;
} DtUnrankedMemRef;

/* memref.copy between views that are not both contiguous (a slice of a
 * gathered result copied into the caller's buffer), as finalize-memref-to-llvm
 * lowers it; upstream defines it in its runner utilities. */
void memrefCopy(int64_t elementSize, DtUnrankedMemRef *source,
                DtUnrankedMemRef *target);

/* The calling rank's coordinate on mesh axis `axis`. */
int64_t dt_rt_axis_index(int32_t axis);

/* Timing of the compiled code's own work (dt-compile --profile-kernels
 * brackets each loop nest and each matmul of the SPMD program with these):
 * dt_rt_clock() before, a time in nanoseconds when dt-run --profile times
 * this rank (0 otherwise), and dt_rt_kernel_done(start, site) after, which
 * adds the time since `start` to the site named by `site`, a constant
 * string of the artifact ("generic (model.mlir:12:8)"). */
int64_t dt_rt_clock(void);
void dt_rt_kernel_done(int64_t start, const char *site);

/* A dt.bounds_check failed: `index` lies outside [0, bound) of the access
 * `what` names (with its location). Fails the calling rank's job with that
 * message and returns; the program runs on with the index clamped to 0, and
 * the run ends with the error (dt-lower-bounds-checks). */
void dt_rt_index_out_of_range(int64_t index, int64_t bound, const char *what);

/* C = epilogue(A * B): the zero fill before the matmul became beta = 0;
 * epilogue bit 1 adds bias[j] to column j, bit 2 applies relu
 * (arith.maximumf(x, 0)); bias is unread without bit 1. */
#define DT_RT_DECLARE_MATMUL_INTO(NAME)                                        \
  void NAME(int64_t, DtMemRef *a, int64_t, DtMemRef *b, int64_t, DtMemRef *c,  \
            int64_t, DtMemRef *bias, int32_t epilogue);

/* C += A * B (linalg.matmul), its batched form, and their `into` forms,
 * through BLAS. f16 and bf16 are widened to f32, multiplied and epilogued
 * in f32 and rounded once (as cuBLASLt's f32 compute type does on the
 * GPU). The f16_f32 and bf16_f32 forms take 16-bit A and B and an f32 C
 * (and bias): mixed precision, nothing rounded. */
#define DT_RT_DECLARE_MATMULS(PREFIX, T)                                       \
  void PREFIX##matmul_##T(int64_t, DtMemRef *, int64_t, DtMemRef *, int64_t,   \
                          DtMemRef *);                                         \
  void PREFIX##batch_matmul_##T(int64_t, DtMemRef *, int64_t, DtMemRef *,      \
                                int64_t, DtMemRef *);                          \
  DT_RT_DECLARE_MATMUL_INTO(PREFIX##matmul_into_##T)                           \
  DT_RT_DECLARE_MATMUL_INTO(PREFIX##batch_matmul_into_##T)
DT_RT_DECLARE_MATMULS(dt_rt_, f32)
DT_RT_DECLARE_MATMULS(dt_rt_, f64)
DT_RT_DECLARE_MATMULS(dt_rt_, f16)
DT_RT_DECLARE_MATMULS(dt_rt_, bf16)
DT_RT_DECLARE_MATMULS(dt_rt_, f16_f32)
DT_RT_DECLARE_MATMULS(dt_rt_, bf16_f32)

/* CUDA target (libdt_runtime_cuda.so, docs/CUDA.md): matmuls through
 * cuBLASLt on device buffers, and the bracket dt-overlap-collectives puts
 * around a collective: between begin and end, collectives run on the rank's
 * communication stream after the work queued so far; wait makes the rank's
 * stream wait for the bracket `end` returned. The mgpu* functions of
 * upstream's gpu-to-llvm lowering are there too. */
DT_RT_DECLARE_MATMULS(dt_rt_gpu_, f32)
DT_RT_DECLARE_MATMULS(dt_rt_gpu_, f64)
DT_RT_DECLARE_MATMULS(dt_rt_gpu_, f16)
DT_RT_DECLARE_MATMULS(dt_rt_gpu_, bf16)
DT_RT_DECLARE_MATMULS(dt_rt_gpu_, f16_f32)
DT_RT_DECLARE_MATMULS(dt_rt_gpu_, bf16_f32)
#undef DT_RT_DECLARE_MATMULS
#undef DT_RT_DECLARE_MATMUL_INTO
void dt_rt_gpu_collectives_begin(void);
int64_t dt_rt_gpu_collectives_end(void);
void dt_rt_gpu_collectives_wait(int64_t handle);
/* The host reads a scalar of device memory (an scf.if condition, a trip
 * count): copies `device` (8 bytes) to `host` once the rank's stream has run
 * the work queued before, watching the job meanwhile. */
void dt_rt_gpu_read_scalar(int64_t, DtMemRef *host, int64_t, DtMemRef *device);

/*===----------------------------------------------------------------------===*
 * Host API: load an artifact and run an entry from C (dt-run uses the C++
 * API of dt/Runtime/ it wraps). Calls return a status code, absl::StatusCode's
 * value (0 is success; 3 invalid argument, 4 deadline exceeded, 5 not found,
 * 9 failed precondition, 10 aborted, 13 internal, 15 data loss), and leave
 * the message in dt_last_error().
 *===----------------------------------------------------------------------===*/

typedef struct DtArtifact DtArtifact;

/* Loads the artifact at `path`. */
int32_t dt_artifact_open(const char *path, DtArtifact **artifact);
void dt_artifact_close(DtArtifact *artifact);
/* The program description (docs/Runtime.md); owned by the artifact. */
const char *dt_artifact_description(const DtArtifact *artifact);
/* Runs `entry` on every rank of its mesh, one thread per rank: buffers[r]
 * is rank r's array of pointers (arguments then results, local shapes). */
int32_t dt_run_threads(const DtArtifact *artifact, const char *entry,
                       void ***buffers, double timeoutSeconds);
/* The message of this thread's last failed call ("" after a success). */
const char *dt_last_error(void);
/* The bytes of freed host buffers the runtime keeps for reuse (blocks of
 * 1 MiB or more, and the calling thread's smaller ones: docs/Runtime.md
 * "Host memory"), and a call that returns them to the system (later steps
 * allocate afresh; other threads' small blocks go when those threads end). */
size_t dt_host_memory_cached(void);
void dt_host_memory_trim(void);

#ifdef __cplusplus
}
#endif

#endif /* DT_RUNTIME_H */
