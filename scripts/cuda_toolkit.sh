#!/usr/bin/env bash
# A CUDA build environment from PyPI alone, for building `--features cuda` on a machine without
# the CUDA toolkit or a GPU (the GPU machine that runs the binary may have no Rust toolchain).
#
#   eval "$(scripts/cuda_toolkit.sh [COMPUTE_CAP])"     (COMPUTE_CAP defaults to 90: H100/H200)
#   cargo build --release -p pgraphrag-train --features cuda --example bench_train
#
# What it sets up under .cache/cuda13 (idempotent):
# - nvcc, its headers and the CUDA runtime from NVIDIA's wheels (nvidia-cuda-nvcc, -runtime,
#   -crt, -cccl, nvidia-nvvm 13.0): candle's kernels are compiled to PTX for COMPUTE_CAP.
# - link stubs for the libraries candle links dynamically (libcuda, libnvrtc, libcurand,
#   libcublas, libcublasLt): one empty function per symbol cudarc declares, with the real
#   libraries' sonames, so the binary links here and loads the real ones on the GPU machine
#   (the driver's libcuda.so.1 and the CUDA 13 libraries, e.g. PyTorch's nvidia/cu13/lib wheels,
#   on LD_LIBRARY_PATH there). The stubs are never run: running the binary here fails at load.
# Prints the environment to export (PATH, CUDA_ROOT, CUDA_COMPUTE_CAP, LIBRARY_PATH).
set -euo pipefail
CAP="${1:-90}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CUDA="$ROOT/.cache/cuda13"
VERSION=13.0

if [ ! -x "$CUDA/bin/nvcc" ]; then
  WHEELS="$(mktemp -d)"
  trap 'rm -rf "$WHEELS"' EXIT
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 \
    -d "$WHEELS" "nvidia-cuda-nvcc==$VERSION.*" "nvidia-cuda-runtime==$VERSION.*" \
    "nvidia-cuda-crt==$VERSION.*" "nvidia-cuda-cccl==$VERSION.*" "nvidia-nvvm==$VERSION.*" >&2
  mkdir -p "$WHEELS/x" "$CUDA"
  for w in "$WHEELS"/*.whl; do python3 -m zipfile -e "$w" "$WHEELS/x" >&2; done
  cp -r "$WHEELS"/x/nvidia/cu13/. "$CUDA"/
  chmod +x "$CUDA"/bin/* "$CUDA"/nvvm/bin/*
  ln -sf libcudart.so.13 "$CUDA/lib/libcudart.so"
  [ -e "$CUDA/lib64" ] || ln -s lib "$CUDA/lib64"
fi

# cudarc's source (the version Cargo.lock pins) declares every function candle may call.
CUDARC_VERSION="$(grep -A1 '^name = "cudarc"$' "$ROOT/Cargo.lock" | sed -n 's/^version = "\(.*\)"$/\1/p')"
CUDARC="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"cudarc-$CUDARC_VERSION" 2>/dev/null | head -1)"
if [ -z "$CUDARC" ]; then
  (cd "$ROOT" && cargo fetch --locked >&2)
  CUDARC="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"cudarc-$CUDARC_VERSION" | head -1)"
fi
STUBS="$CUDA/stubs"
mkdir -p "$STUBS"
stub() { # NAME SONAME MODULE PATTERN [EXCLUDED PREFIX]
  [ -f "$STUBS/lib$1.so" ] && return
  grep -hoE "^\s+fn $4[A-Za-z0-9_]*\(" "$CUDARC/src/$3/sys/mod.rs" | sed -E 's/^\s+fn ([A-Za-z0-9_]+)\(/void \1(void){}/' \
    | grep -v "^void ${5:-@}" | sort -u > "$STUBS/$1.c"
  cc -shared -fPIC -o "$STUBS/lib$1.so" -Wl,-soname,"$2" "$STUBS/$1.c"
}
stub cuda libcuda.so.1 driver 'cu[A-Z]'
stub nvrtc libnvrtc.so.13 nvrtc nvrtc
stub curand libcurand.so.10 curand curand
stub cublas libcublas.so.13 cublas cublas cublasLt
stub cublasLt libcublasLt.so.13 cublaslt cublasLt

cat <<EOF
export PATH="$CUDA/bin:\$PATH" CUDA_ROOT="$CUDA" CUDA_PATH="$CUDA" CUDA_COMPUTE_CAP="$CAP"
export LIBRARY_PATH="$CUDA/lib:$STUBS\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
EOF
