/* Runs the MLP example (tp=4) through the runtime's C host API with inputs
 * of ones: every output element is 64 * 256 = 16384. */
#include "dt/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *filled(size_t n, float value) {
  float *p = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i)
    p[i] = value;
  return p;
}

int main(int argc, char **argv) {
  DtArtifact *artifact = NULL;
  int32_t code = dt_artifact_open("no-such-artifact.so", &artifact);
  printf("open missing: code %d: %s\n", code, dt_last_error());
  if (dt_artifact_open(argv[1], &artifact) != 0) {
    printf("open: %s\n", dt_last_error());
    return 1;
  }
  printf("%s", dt_artifact_description(artifact));
  /* Local shapes on each of the 4 ranks: x 16x64 (R), w1 64x64 (S(1)),
   * w2 64x64 (S(0)), y 16x64 (R). */
  void **buffers[4];
  float *results[4];
  for (int r = 0; r < 4; ++r) {
    results[r] = filled(16 * 64, -1);
    buffers[r] = malloc(4 * sizeof(void *));
    buffers[r][0] = filled(16 * 64, 1);
    buffers[r][1] = filled(64 * 64, 1);
    buffers[r][2] = filled(64 * 64, 1);
    buffers[r][3] = results[r];
  }
  code = dt_run_threads(artifact, "train", buffers, 10);
  printf("run train: code %d: %s\n", code, dt_last_error());
  code = dt_run_threads(artifact, "main", buffers, 10);
  printf("run main: code %d\n", code);
  int bad = 0;
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 16 * 64; ++i)
      bad += results[r][i] != 16384.0f;
  printf("wrong elements: %d\n", bad);
  dt_artifact_close(artifact);
  return bad != 0;
}
