# Sourced by the scripts that run the bundle on a GPU machine
# (scripts/gpu-check.sh, scripts/gpu-ncu.sh), with $bundle (the bundle
# scripts/gpu-bundle.sh made) and $out (a folder to write in) set: puts the
# bundle's libraries, cuBLASLt and NCCL on LD_LIBRARY_PATH and sets $bin to
# where a dt-run that runs on this machine is.

# Libraries: the bundle's; cuBLASLt from the CUDA toolkit or PyTorch's
# wheels; NCCL likewise (PyTorch's nvidia-nccl).
libs=$bundle/lib
# The libraries that travel compressed (scripts/gpu-bundle.sh), unpacked
# beside the bundle's others.
packed=$(ls "$bundle"/lib/*.xz 2>/dev/null || true)
if [[ -n $packed ]]; then
  unpacked=$(mktemp -d)
  trap 'rm -rf "$unpacked"' EXIT
  for lib in $packed; do
    python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$lib" "$unpacked/$(basename "$lib" .xz)"
  done
  libs=$unpacked:$libs
fi
for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $dir ]] && libs=$libs:$dir
done
wheels=$(python3 - <<'PY' 2>/dev/null
import importlib, os
dirs = []
for name in ("nvidia.nccl", "nvidia.cublas", "nvidia.cuda_runtime", "nvidia.cu13"):
    try:
        for path in importlib.import_module(name).__path__:
            for sub in ("lib", "lib64"):
                if os.path.isdir(os.path.join(path, sub)):
                    dirs.append(os.path.join(path, sub))
    except Exception:
        pass
print(":".join(dirs))
PY
)
export LD_LIBRARY_PATH=$libs${wheels:+:$wheels}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# dt-run was built against the glibc in the bundle's glibc/VERSION; on an older one it
# runs through the bundle's own loader and C runtime.
bin=$bundle/bin
built=$(cat "$bundle/glibc/VERSION" 2>/dev/null || echo 0)
host=$(getconf GNU_LIBC_VERSION | cut -d' ' -f2)
if [[ $(printf '%s\n%s\n' "$built" "$host" | sort -V | head -1) != "$built" ]]; then
  bin=$out/compat-bin
  mkdir -p "$bin"
  cat > "$bin/dt-run" <<SH
#!/bin/sh
exec "$bundle/glibc/ld-linux-x86-64.so.2" --library-path "$bundle/glibc:\$LD_LIBRARY_PATH" "$bundle/bin/dt-run" "\$@"
SH
  chmod +x "$bin/dt-run"
  echo "$(basename "$0"): host glibc $host is older than $built: dt-run runs on the bundle's glibc"
fi

