#!/usr/bin/env bash
# The native engine built for aarch64 (AArch64 Linux) and its kernel tests run under user-mode
# emulation (qemu-aarch64): the NEON kernels (with and without the dot-product extension) against
# the portable ones, and the real SmolLM2 logits against the fixture every CPU must reproduce
# (crates/llm/tests/native_across_cpus.rs). Speed under emulation means nothing; bits do.
#
# Needs Debian's qemu-user-static, gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (.ci/run installs
# them) and rustup (the aarch64 standard library is added here, from the Rust project's registry).
# Without the tools: a message and exit 0, or a failure under CI=true.
#   scripts/test_aarch64.sh            (extra arguments go to the test binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
for tool in qemu-aarch64-static aarch64-linux-gnu-gcc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    msg="test_aarch64: $tool is missing (Debian: apt-get install qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
    if [ "${CI:-}" = true ]; then
      echo "$msg" >&2
      exit 1
    fi
    echo "$msg; skipping the aarch64 tests" >&2
    exit 0
  fi
done
rustup target add aarch64-unknown-linux-gnu
scripts/fetch-llms.sh --smollm-only
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64-static -L /usr/aarch64-linux-gnu"
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
# The split-prompt test processes a 300-token prompt a dozen times (about 10 minutes emulated); the
# prompt kernels' bit-identity across splits is checked natively, and across CPUs by the fixture.
# Without the default `candle` feature: the native engine needs none of candle, and candle's crates
# are most of the cross build (the candle-based kernel unit tests run natively on x86 instead).
# The portable kernels are plain Rust, bit-identical on every architecture and checked against the
# fixture natively: emulating them too cost a third of the emulated run (about 45 s of 132).
PGRAPHRAG_SKIP_PORTABLE=1 cargo test --locked -p pgraphrag-llm --no-default-features --target aarch64-unknown-linux-gnu \
  --lib --test native_across_cpus -- --skip split_prompts_are_bit_identical "$@"
echo "test_aarch64: passed in $(( $(date +%s) - start )) s"
