#!/usr/bin/env bash
# Builds, here, what the GPU device check runs there (the device image has no Rust toolchain):
# the ndvm binary and the GPU test binaries, stripped, into .devbin/ (ignored by git), and the
# Vulkan loader packages into .gl/. Carry both: run(command="bash scripts/gpu-device-check.sh",
# carry=[".devbin", ".gl"]).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p harness
list_tests() {
  python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"]+"-"+m["target"]["kind"][0]+" "+m["executable"])'
}
mapfile -t bins < <(
  cargo test --release -p runtime-gpu -p shaders --no-run --message-format=json 2>/dev/null | list_tests
  cargo test --release -p ndvm-tests --test gpu_regions --no-run --message-format=json 2>/dev/null | list_tests
)
rm -rf .devbin && mkdir -p .devbin
cp target/release/ndvm .devbin/ndvm
for entry in "${bins[@]}"; do
  name=${entry%% *}; path=${entry#* }
  cp "$path" ".devbin/test-$name"
done
strip .devbin/*
if [ ! -d .gl ] || ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update -qq && (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
grep -qx '/.devbin/' .git/info/exclude || echo '/.devbin/' >> .git/info/exclude
grep -qx '/.gl/' .git/info/exclude || echo '/.gl/' >> .git/info/exclude
ls -la .devbin .gl
