#!/usr/bin/env bash
# The GPU check on a machine with a real GPU (the project's H200 device machine): runs binaries
# built here by scripts/build-device-bins.sh (carried in .devbin/, with the Vulkan loader in .gl/)
# and writes under $OUT: log.txt (everything), devices.json, tests.txt and bench.jsonl (one JSON
# document per state dimension D). Each step has a timeout; the whole check stays under 7 minutes.
set -u
out=${OUT:-/tmp/ndvm-device-out}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] && export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export NDVM_ADAPTER=${NDVM_ADAPTER:-NVIDIA} CI=true
echo "== $(date -u) VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset} cores=$(nproc)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
ldconfig -p | grep -E 'libvulkan|libGLX_nvidia|libnvidia-glcore' | head -5
echo "== devices"
timeout 60 .devbin/ndvm devices --format json > "$out/devices.json"; echo "devices rc=$?"
cat "$out/devices.json"
echo "== tests"
for t in .devbin/test-*; do
  echo "-- $t"
  timeout 120 "$t" --test-threads=4 >> "$out/tests.txt" 2>&1; echo "$t rc=$?"
done
grep -E "test result|FAILED|panicked" "$out/tests.txt"
echo "== bench"
for d in 2 8 16 32 64; do
  timeout 150 .devbin/ndvm bench gpu-ceiling --d "$d" --g 16384 --samples 2 --device auto --format json >> "$out/bench.jsonl"
  echo "D=$d rc=$?"
done
python3 - "$out/bench.jsonl" <<'PY'
import json, sys
text, dec, i = open(sys.argv[1]).read(), json.JSONDecoder(), 0
while text[i:].strip():
    rest = text[i:].lstrip()
    doc, n = dec.raw_decode(rest)
    i = len(text) - len(rest) + n
    for r in doc["rows"]:
        print(f"{doc['adapter']}: D={r['d']} GPU {r['gpu_evals_per_s']:.4g}/s CPU {r['cpu_evals_per_s']:.4g}/s "
              f"ratio {r['gpu_over_cpu']:.3g} max rel {r['max_rel_diff']:.2e} (cpu threads {doc['cpu_threads']})")
PY
echo "== done $(date -u)"
