// Boolean tensors (i1) in and out of an entry: a padding mask split by
// rows, a mask computed on column-split data, and a P(max) result (which
// rows have any kept positive entry, reduced by ori over split columns)
// that dt-run gathers by or-ing the ranks' pieces. An i1 crosses the entry
// as one byte, 0 or 1 (numpy's |b1); dt-run rejects any other byte.
// RUN: dt-compile %s -o %t.so
// RUN: dt-run %t.so --describe | FileCheck %s --check-prefix=DESCRIBE
// DESCRIBE: arg 0 - i1 8x6 S(0),R
// DESCRIBE: result 1 - i1 8x6 S(0),S(1)
// DESCRIBE: result 2 - i1 8 R,P(max)
// RUN: dt-run %t.so --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %t.so --backend=mpi --seed 3 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY-COUNT-3: : ok
// VERIFY: verify: PASS
//
// Exact values: the mask keeps entries k = 0, 3, 6, ... (row r keeps 6r
// and 6r + 3); x is the pattern (7k mod 11) - 5, so row 0 keeps -5 and 5,
// and the rows with a kept positive entry are 0, 1, 2, 6 and 7.
// RUN: %npy mask %t.mask.npy 8,6
// RUN: %npy pattern %t.x.npy 8,6
// RUN: dt-run %t.so --input 0=%t.mask.npy --input 1=%t.x.npy --verify --output-dir %t.out | FileCheck %s --check-prefix=VERIFY
// RUN: %npy print %t.out/result1.npy | FileCheck %s --check-prefix=KEPT
// KEPT: {{^}}1{{$}}
// KEPT-NEXT: {{^}}0{{$}}
// KEPT-NEXT: {{^}}0{{$}}
// KEPT-NEXT: {{^}}1{{$}}
// RUN: %npy print %t.out/result0.npy | FileCheck %s --check-prefix=ZEROED
// ZEROED: {{^}}-5.0{{$}}
// ZEROED-NEXT: {{^}}0.0{{$}}
// ZEROED-NEXT: {{^}}0.0{{$}}
// ZEROED-NEXT: {{^}}5.0{{$}}
// RUN: %npy print %t.out/result2.npy | tr '\n' ' ' | FileCheck %s --check-prefix=ANY
// ANY: {{^}}1 1 1 0 0 0 1 1 {{$}}
//
// Bad input: a byte other than 0 or 1, and a bool file where f32 belongs.
// RUN: %npy mask %t.bad.npy 8,6 7=2
// RUN: not dt-run %t.so --input 0=%t.bad.npy --seed 1 2>&1 | FileCheck %s --check-prefix=BADBYTE
// BADBYTE: holds the byte 2 at element 7 of a bool array; bools are 0 or 1
// RUN: not dt-run %t.so --input 1=%t.mask.npy --seed 1 2>&1 | FileCheck %s --check-prefix=BADTYPE
// BADTYPE: holds i1 but the program expects f32
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%mask: tensor<8x6xi1> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %x: tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>})
    -> (tensor<8x6xf32>,
        tensor<8x6xi1> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
        tensor<8xi1> {dt.sharding = #dt.sharding<@mesh, [R, P(max)]>}) {
  %zeros = arith.constant dense<0.0> : tensor<8x6xf32>
  %masked = arith.select %mask, %x, %zeros : tensor<8x6xi1>, tensor<8x6xf32>
  %positive = arith.cmpf ogt, %masked, %zeros : tensor<8x6xf32>
  %kept = arith.ori %positive, %mask : tensor<8x6xi1>
  %false = arith.constant false
  %e = tensor.empty() : tensor<8xi1>
  %init = linalg.fill ins(%false : i1) outs(%e : tensor<8xi1>) -> tensor<8xi1>
  %any = linalg.reduce ins(%positive : tensor<8x6xi1>) outs(%init : tensor<8xi1>) dimensions = [1]
    (%p: i1, %a: i1) {
      %r = arith.ori %p, %a : i1
      linalg.yield %r : i1
    }
  return %masked, %kept, %any : tensor<8x6xf32>, tensor<8x6xi1>, tensor<8xi1>
}
