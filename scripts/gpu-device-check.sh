#!/usr/bin/env bash
# The GPU check on a machine with a real GPU (the project's H200 device machine): runs binaries
# built here by scripts/build-device-bins.sh (carried in .devbin/, with the Vulkan loader in .gl/)
# and writes under $OUT: log.txt (everything), devices.json, tests.txt, gpu-regions.txt (the region
# path against the CPU over a (B, D) grid), calibrate-*.json (the D-dimensional Kalman example
# under auto and cpu), gpu-regions-widths.txt (part of the grid at each forced number of
# invocations per lane, in workgroups of 64, 256 and 1024) and gpu-regions-wg256.txt and
# gpu-regions-wg1024.txt (the grid in workgroups of 256 and 1024), in that order. Each step has
# its own timeout, cut to what is left of BUDGET seconds (default 560, under one 600-second
# device call); a step with no time left is skipped and says so. GRID_*, GRIDW_*, CAL_*, CAL32_* override the sizes (a quick run on Mesa's software driver:
# see REPRODUCE.md).
set -u
out=${OUT:-/tmp/ndvm-device-out}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
budget=${BUDGET:-560}
start=$(date +%s)
# step SECONDS COMMAND...: runs COMMAND with a timeout of SECONDS, or of what is left.
step() {
  local want=$1; shift
  local left=$((budget - ($(date +%s) - start)))
  if ((left < want)); then want=$left; fi
  if ((want < 5)); then echo "skipped, no time left: $*"; return 124; fi
  timeout "$want" "$@"
}
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] && export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export NDVM_ADAPTER=${NDVM_ADAPTER:-NVIDIA} CI=true
echo "== $(date -u) VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset} cores=$(nproc) budget=${budget}s"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
ldconfig -p | grep -E 'libvulkan|libGLX_nvidia|libnvidia-glcore' | head -5
echo "== devices"
step 60 .devbin/ndvm devices --measure --format json > "$out/devices.json"; echo "devices rc=$?"
cat "$out/devices.json"
echo "== tests"
for t in .devbin/test-*; do
  echo "-- $t"
  step "${TEST_TIMEOUT:-60}" "$t" --test-threads=4 >> "$out/tests.txt" 2>&1; echo "$t rc=$?"
done
grep -E "test result|FAILED|panicked" "$out/tests.txt"
grid() {  # file timeout extra-args...
  local file=$1 secs=$2; shift 2
  step "$secs" .devbin/ndvm bench gpu-regions --samples 3 --sample-ms 50 \
    --max-numbers "${GRID_MAX_NUMBERS:-540000000}" "$@" | tee -a "$out/$file"
  echo "gpu-regions $* rc=${PIPESTATUS[0]}"
}
echo "== region path: (B, D) grid"
grid gpu-regions.txt "${GRID_TIMEOUT:-150}" --d "${GRID_D:-2,4,8,16,32}" \
  --lanes "${GRID_LANES:-256,1024,4096,16384}"
echo "== the D-dimensional Kalman example calibrated by Adam, f32: --device auto against cpu"
calibrate() {  # name d restarts steps device
  local t0=$(date +%s.%N)
  step "${CAL_TIMEOUT:-45}" .devbin/ndvm calibrate examples/kalman_nd.scm --bind d="$2" --params q,r \
    --init q=0.3,r=0.3 --restarts "$3" --steps "$4" --lr 0.08 --clamp q=1e-4: --clamp r=1e-4: \
    --precision f32 --device "$5" --format json > "$out/calibrate-$1.json"
  local rc=$?
  echo "calibrate $1 (d=$2 restarts=$3 steps=$4 device=$5) rc=$rc wall $(python3 -c "import time; print(f'{time.time() - $t0:.2f}')") s"
  head -c 400 "$out/calibrate-$1.json"; echo
}
# Restarts are spread over every core in jobs of 256 lanes, under auto and cpu alike.
calibrate d8-auto 8 "${CAL_RESTARTS:-4096}" 5 auto
calibrate d8-cpu 8 "${CAL_RESTARTS:-4096}" 5 cpu
calibrate d32-auto 32 "${CAL32_RESTARTS:-4096}" 3 auto
calibrate d32-cpu 32 "${CAL32_RESTARTS:-4096}" 3 cpu
echo "== part of it at each lane width (--lane-width W invocations per lane) and workgroup size"
for wg in ${GRID_WORKGROUPS:-64 256 1024}; do
  for w in ${GRID_WIDTHS:-1 4 16 64}; do
    grid gpu-regions-widths.txt "${GRIDW_TIMEOUT:-30}" --d "${GRIDW_D:-8,32}" \
      --lanes "${GRIDW_LANES:-256,4096}" --lane-width "$w" --workgroup "$wg"
  done
done
for wg in 256 1024; do
  echo "== the grid in workgroups of $wg invocations (more lanes per workgroup)"
  grid "gpu-regions-wg$wg.txt" "${GRID_TIMEOUT:-150}" --d "${GRID_D:-2,4,8,16,32}" \
    --lanes "${GRID_LANES:-256,1024,4096,16384}" --workgroup "$wg"
done
echo "== done $(date -u), $(($(date +%s) - start)) s"
