// A copy whose source and destination fit in the cache moves at the cache's
// rate (the topology's `cache` line). On a machine whose ring step costs
// 0.5 us and whose memory moves 25 GB/s, two all_reduces of 16 KiB on dp = 2
// take 3.3 us apart; one call of 32 KiB takes 2.3 us plus the copies of the
// arguments in and of the results out (into the returned buffers, which
// the all_reduces apart write), 5.2 us at the memory's rate, so they stay
// apart:
// RUN: printf 'dp 0.5 25\ndevice 0.1 0.1 25\n' > %t.memory
// RUN: dt-opt %s -dt-combine-collectives="topology=%t.memory explain" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: remark: all_reduce on ["dp"] not in one call with the one at {{.*}}: one call would take 7.6 us against 3.3 us apart
// MEMORY-NOT: in one call:
// In a 1 MB cache at 200 GB/s the same copies take 0.7 us, and the four
// gradients go in one call. The four of 256 KiB stay apart: two of them
// would copy 1 MiB, most of it past the cache.
// RUN: printf 'dp 0.5 25\ndevice 0.1 0.1 25\ncache 1 200\n' > %t.cache
// RUN: dt-opt %s -dt-combine-collectives="topology=%t.cache explain" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CACHE
// CACHE: combine-collectives-cache.mlir:27:9: remark: 4 x all_reduce on ["dp"] in one call: 4.9 us against 6.6 us apart
// CACHE: remark: all_reduce on ["dp"] not in one call with the one at {{.*}}: one call would take 70.9 us against 23.0 us apart
// A malformed cache line is an error naming the line.
// RUN: printf 'cache 1\n' > %t.bad
// RUN: not dt-opt %s -dt-combine-collectives="topology=%t.bad" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: topology line 1: expected 'cache <MB> <GB/s>', got 'cache 1'

dt.mesh @mesh = <["dp" = 2]>
func.func @small(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>, %d: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %ra = dt.all_reduce %a on @mesh ["dp"] sum : tensor<64x64xf32> -> tensor<64x64xf32>
  %rb = dt.all_reduce %b on @mesh ["dp"] sum : tensor<64x64xf32> -> tensor<64x64xf32>
  %rc = dt.all_reduce %c on @mesh ["dp"] sum : tensor<64x64xf32> -> tensor<64x64xf32>
  %rd = dt.all_reduce %d on @mesh ["dp"] sum : tensor<64x64xf32> -> tensor<64x64xf32>
  return %ra, %rb, %rc, %rd : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

func.func @large(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<256x256xf32>) {
  %ra = dt.all_reduce %a on @mesh ["dp"] sum : tensor<256x256xf32> -> tensor<256x256xf32>
  %rb = dt.all_reduce %b on @mesh ["dp"] sum : tensor<256x256xf32> -> tensor<256x256xf32>
  return %ra, %rb : tensor<256x256xf32>, tensor<256x256xf32>
}
