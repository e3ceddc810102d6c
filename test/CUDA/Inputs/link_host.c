/* Links a CUDA artifact with the CUDA runtime into an executable: the linker
 * then resolves every symbol the artifact and the runtime need (mgpu*,
 * dt_rt_gpu_*, CUDA driver, cuBLASLt, NCCL, MPI) or fails. */
#include <stdio.h>

const char *dt_program_description(void);
const void *dt_cuda_plugin(void);

int main(void) {
  printf("%s", dt_program_description());
  return dt_cuda_plugin() ? 0 : 1;
}
