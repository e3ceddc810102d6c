// Row kernels and split reductions over 16-bit floats: shuffles and
// gpu.all_reduce carry 32- and 64-bit values, so a bf16 or f16 partial max
// crosses lanes as the f32 it extends to, exactly, and is combined in its
// own type (a sum's partials are f32 already). A bf16 row max and the rows minus it (a warp per row, a
// softmax's first half), an f16 max over rows of 300 (a block per row:
// gpu.all_reduce with the max as its body), an f16 sum over rows of 300
// and a bf16 column sum (split into chunks). Maxima do not depend on the
// order of combining, so those results match the CPU build exactly. Sums
// accumulate in f32 and round once (dt-widen-half-sums), so the order of
// the f32 adds can move a result by at most one 16-bit unit (2^-7 of it in
// bf16); on these inputs they match exactly too. (With 16-bit steps, the
// CPU build's one lane added each of the 96 rows to a bf16 total grown to
// about 9, and the two were 2% apart.)
// RUN: dt-run %s --seed 7 --output-dir %t.cpu > /dev/null
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 7 --verify --output-dir %t.emu | FileCheck %s --check-prefix=VERIFY
// RUN: rm -rf %t.max.emu %t.max.cpu && mkdir %t.max.emu %t.max.cpu
// RUN: cp %t.emu/result0.npy %t.emu/result1.npy %t.max.emu && cp %t.cpu/result0.npy %t.cpu/result1.npy %t.max.cpu
// RUN: %npy compare %t.max.emu %t.max.cpu 0 0 | FileCheck %s --check-prefix=EXACT
// RUN: %npy compare %t.emu %t.cpu 8e-3 0 | FileCheck %s --check-prefix=SAME
// RUN: %if cuda-toolkit %{ dt-compile --target=cuda %s -o %t.gpu.so %}
// VERIFY: verify: PASS
// EXACT-COUNT-2: max abs err 0 {{.*}}: ok
// EXACT: compare: PASS
// SAME-COUNT-4: max abs err {{.*}}: ok
// SAME: compare: PASS
dt.mesh @mesh = <["tp" = 2]>
#row = affine_map<(i, j) -> (i, j)>
#total = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<40x24xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %h: tensor<12x300xf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %c: tensor<96x10xbf16> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<40x24xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<12xf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<12xf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<10xbf16> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %ninf = arith.constant 0xFF80 : bf16
  %hninf = arith.constant 0xFC00 : f16
  %hzero = arith.constant 0.0 : f16
  %zero = arith.constant 0.0 : bf16
  %maxes = tensor.empty() : tensor<40xbf16>
  %full = tensor.empty() : tensor<40x24xbf16>
  %hmaxes = tensor.empty() : tensor<12xf16>
  %hsums = tensor.empty() : tensor<12xf16>
  %cols = tensor.empty() : tensor<10xbf16>

  // y = x - max(x) over each row, in bf16.
  %m0 = linalg.fill ins(%ninf : bf16) outs(%maxes : tensor<40xbf16>) -> tensor<40xbf16>
  %m = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<40x24xbf16>) outs(%m0 : tensor<40xbf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %a = arith.maximumf %acc, %in : bf16
    linalg.yield %a : bf16
  } -> tensor<40xbf16>
  %y = linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<40x24xbf16>, tensor<40xbf16>) outs(%full : tensor<40x24xbf16>) {
  ^bb0(%in: bf16, %t: bf16, %out: bf16):
    %o = arith.subf %in, %t : bf16
    linalg.yield %o : bf16
  } -> tensor<40x24xbf16>

  // The max and the sum of each row of h, in f16.
  %hm0 = linalg.fill ins(%hninf : f16) outs(%hmaxes : tensor<12xf16>) -> tensor<12xf16>
  %hm = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<12x300xf16>) outs(%hm0 : tensor<12xf16>) {
  ^bb0(%in: f16, %acc: f16):
    %a = arith.maxnumf %acc, %in : f16
    linalg.yield %a : f16
  } -> tensor<12xf16>
  %hs0 = linalg.fill ins(%hzero : f16) outs(%hsums : tensor<12xf16>) -> tensor<12xf16>
  %hs = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<12x300xf16>) outs(%hs0 : tensor<12xf16>) {
  ^bb0(%in: f16, %acc: f16):
    %a = arith.addf %acc, %in : f16
    linalg.yield %a : f16
  } -> tensor<12xf16>

  // Column sums of c in bf16.
  %k0 = linalg.fill ins(%zero : bf16) outs(%cols : tensor<10xbf16>) -> tensor<10xbf16>
  %k = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["reduction", "parallel"]}
      ins(%c : tensor<96x10xbf16>) outs(%k0 : tensor<10xbf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %a = arith.addf %acc, %in : bf16
    linalg.yield %a : bf16
  } -> tensor<10xbf16>
  return %y, %hm, %hs, %k : tensor<40x24xbf16>, tensor<12xf16>, tensor<12xf16>, tensor<10xbf16>
}
