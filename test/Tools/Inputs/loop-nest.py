"""A function whose tensor goes through a nest of argv[1] scf.for loops,
each carrying it on, then is doubled. With --sharded the tensor is 8x4 and
split over a mesh of 2 (for propagation); otherwise a plain 4-element one."""
import sys

depth = int(sys.argv[1])
sharded = "--sharded" in sys.argv[2:]
tensor = "tensor<8x4xf32>" if sharded else "tensor<4xf32>"
argument = f"%x: {tensor}"
if sharded:
    print('dt.mesh @mesh = <["tp" = 2]>')
    argument += " {dt.sharding = #dt.sharding<@mesh, [S(0)]>}"
print(f"func.func @main({argument}) -> {tensor} {{")
print("  %c0 = arith.constant 0 : index")
print("  %c1 = arith.constant 1 : index")
for i in range(depth):
    carried = "%x" if i == 0 else f"%a{i - 1}"
    print(f"  %r{i} = scf.for %i{i} = %c0 to %c1 step %c1 iter_args(%a{i} = {carried}) -> ({tensor}) {{")
print(f"  %y = arith.addf %a{depth - 1}, %a{depth - 1} : {tensor}")
for i in reversed(range(depth)):
    yielded = "%y" if i == depth - 1 else f"%r{i + 1}"
    print(f"  scf.yield {yielded} : {tensor}\n  }}")
print(f"  return %r0 : {tensor}\n}}")
