#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU and no network, from a folder made by scripts/device-pack.sh:
#
#   cd DIR && bash scripts/device-check.sh        (OUT: where the report goes; default ./device-check-out)
#
# In order, each stage time-boxed (the whole within DEVICE_CHECK_BUDGET_S, default 530 s) and its result kept
# whatever the others do, the report rewritten after every stage:
#   wheels      the carried Python wheels into /tmp/kvsite (the image has python3 3.12 with torch and numpy)
#   model       bench/device_model.py: SmolLM2-135M's exact GGUF layout (30 layers, its BPE tokenizer, Q4_1/Q8_0)
#               with seeded random weights, built here from the carried 0.4 MB layout (beside the build)
#   build       scripts/install-llama.sh with KVGRAFT_LLAMA_CUDA=1 (sm_90, cuBLAS from the toolkit or PyTorch's
#               nvidia package) from the carried trimmed sdist, into the image's Python (~300 s on 16 cores)
#   load-test   numpy imported BEFORE llama_cpp, the model loaded with every layer on the GPU (the order that
#               crashed in std::regex), and LD_DEBUG's count of libllama symbols bound to libggml-cuda; then the
#               same with llama_cpp first (the order engine/_load_order.py keeps)
#   fingerprint, selfcheck, gate (N=640, Q=8, 16 greedy steps, flash attention on and off, recorded as
#               attestations), xdev (GPU<->CPU restore, save/restore bytes and ms: bench/device_check.py), the
#               batch probe (flash attention on/off x a KV stream per sequence/unified, one
#               process each), bench restore, regimes (relocation), the CPU backend's
#               gate on the same host
# and writes ONE JSON report, $OUT/device-check.json (bench/device_report.py), beside build.log.gz,
# device-check.log and stage-stderr.tar.gz (every stage's whole stderr, llama.cpp's own lines included). Exit 0 iff the build and the llama_cpp-first load test passed, both gates ran (byte-exact or
# not: the report says) and the report was written. The numpy-first load test is a measurement of the hazard
# engine/_load_order.py avoids (it crashed on the H200), not a condition.
# Settings: DEVICE_CHECK_BUDGET_S; DEVICE_CHECK_ONLY="stage names" runs only those; DEVICE_CHECK_WHEEL=PATH installs that llama-cpp-python wheel instead of building
# (a rehearsal on a CPU machine); DEVICE_CHECK_PYTHON (default python3).
set -uo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
BUDGET=${DEVICE_CHECK_BUDGET_S:-530}
DEADLINE=$((T0 + BUDGET))
OUT=${OUT:-$PWD/device-check-out}
RUN=${DEVICE_CHECK_RUN:-/tmp/kvgraft-device-check}
PY=${DEVICE_CHECK_PYTHON:-python3}
mkdir -p "$OUT" "$RUN"
rm -f "$RUN"/*.json "$RUN"/*.out "$RUN"/*.err
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUT/device-check.log") 2>&1
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }

# stages.json: {name: {rc, seconds, box_s, timed_out, skipped, error_lines, stderr_tail}}
record() {  # NAME RC SECONDS BOX [SKIPPED]
  "$PY" -m bench.device_report record --stages "$RUN/stages.json" --err "$RUN/$1.err" --skipped "${5:-}" "$1" "$2" "$3" "$4" \
    2>>"$RUN/record.err" || say "record $1 failed: $(tail -3 "$RUN/record.err")"
}

report() {
  "$PY" -m bench.device_report report --dir "$RUN" --out "$OUT/device-check.json" 2>>"$RUN/report.err" \
    || say "report failed: $(tail -3 "$RUN/report.err")"
}

# stage NAME BOX_S OUTFILE CMD...: run CMD with stdout to $RUN/OUTFILE (or NAME.out), stderr to NAME.err, within
# BOX_S and what is left of the budget; record it; rewrite the report
stage() {
  local name=$1 box=$2 outfile=$3; shift 3
  if [ -n "${DEVICE_CHECK_ONLY:-}" ] && ! [[ " $DEVICE_CHECK_ONLY " == *" $name "* ]]; then
    record "$name" 0 0 0 "not in DEVICE_CHECK_ONLY"; return 0
  fi
  local left=$((DEADLINE - $(date +%s) - 8))
  [ "$left" -lt "$box" ] && box=$left
  if [ "$box" -lt 5 ]; then
    say "$name: skipped (budget spent)"; record "$name" 0 0 0 "budget spent"; report; return 99
  fi
  local t=$(date +%s)
  say "$name (at most ${box}s)"
  timeout -k 5 "$box" "$@" > "$RUN/${outfile:-$name.out}" 2> "$RUN/$name.err"
  local rc=$?
  say "$name: rc=$rc in $(( $(date +%s) - t ))s"
  [ $rc != 0 ] && tail -5 "$RUN/$name.err"
  record "$name" "$rc" "$(( $(date +%s) - t ))" "$box"
  report
  return $rc
}

# -- the machine ---------------------------------------------------------------------------------------------------
"$PY" - > "$RUN/machine.json" <<'PY'
import json, os, platform, subprocess, sys
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as exc:
        return f"unavailable: {exc}"
cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][:1]
print(json.dumps({
    "nvidia_smi": run("nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap,pci.bus_id",
                      "--format=csv,noheader"),
    "nvcc": run("nvcc", "--version").splitlines()[-1:],
    "python": sys.version.split()[0], "executable": sys.executable, "prefix": sys.prefix,
    "cpu": cpu[0] if cpu else "?", "cores": os.cpu_count(), "kernel": platform.release(),
    "gcc": run("gcc", "--version").splitlines()[:1], "git": run("git", "--version")}, indent=1))
PY
say "machine: $(tr -d '\n' < "$RUN/machine.json" | head -c 400)"

# -- wheels and the model ------------------------------------------------------------------------------------------
export PYTHONPATH=$PWD:/tmp/kvsite${PYTHONPATH:+:$PYTHONPATH}
stage wheels 60 "" "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/kvsite devpack/wheels/*.whl
MODEL=/tmp/kvgraft-model/smollm2-135m-layout-random.gguf
mkdir -p "$(dirname "$MODEL")"
( t=$(date +%s); timeout 120 "$PY" -m bench.device_model build devpack/smollm2-layout.json.gz "$MODEL" \
    > "$RUN/model.json" 2> "$RUN/model.err"; record model $? $(( $(date +%s) - t )) 120 ) &
MODEL_PID=$!

# -- the CUDA build --------------------------------------------------------------------------------------------------
VENV=$("$PY" -c 'import sys; print(sys.prefix)')
export KVGRAFT_WHEEL_DIR=/tmp/kvgraft-wheels
if [ -n "${DEVICE_CHECK_WHEEL:-}" ]; then
  stage build 120 build.log "$PY" -m pip install -q --force-reinstall --no-deps --no-index "$DEVICE_CHECK_WHEEL"
else
  stage build 420 build.log env KVGRAFT_LLAMA_CUDA=1 KVGRAFT_LLAMA_CUDA_ARCHITECTURES="${KVGRAFT_LLAMA_CUDA_ARCHITECTURES:-90}" \
    KVGRAFT_LLAMA_SDIST="$PWD/devpack/llama_cpp_python-0.3.36.tar.gz" bash scripts/install-llama.sh "$VENV"
fi
BUILD_RC=$?
cat "$RUN/build.err" >> "$RUN/build.log" 2>/dev/null
gzip -c "$RUN/build.log" > "$OUT/build.log.gz"
"$PY" - "$RUN/build.log" > "$RUN/build.json" <<'PY'
import json, os, re, subprocess, sys
log = open(sys.argv[1], errors="replace").read()
out = {"log_lines": [l for l in log.splitlines() if re.search(
    r"building llama-cpp-python|cuBLAS|CUDA Toolkit|cublas|CMAKE_CUDA_ARCH|installed |instruction sets|error", l)][-25:]}
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except Exception as exc:
        return f"unavailable: {exc}"
try:
    import llama_cpp
    lib = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")
    out["llama_cpp"] = llama_cpp.__file__
    out["system_info"] = llama_cpp.llama_print_system_info().decode()
    out["libs"] = sorted(os.listdir(lib))
    for name in ("libllama.so", "libggml-cuda.so", "libggml-base.so"):
        p = os.path.join(lib, name)
        if not os.path.exists(p):
            continue
        dyn = run("readelf", "-d", p)
        out[name] = {"symbolic": "SYMBOLIC" in dyn,
                     "runpath": re.findall(r"R(?:UN)?PATH.*\[(.*)\]", dyn),
                     "needed": re.findall(r"NEEDED.*\[(.*)\]", dyn),
                     "not_found": [l.strip() for l in run("ldd", p).splitlines() if "not found" in l],
                     "exported_std_symbols": sum(1 for l in run("nm", "-D", "--defined-only", "-C", p).splitlines()
                                                 if " std::" in l),
                     "exported_std_regex_symbols": sum(1 for l in run("nm", "-D", "--defined-only", "-C", p)
                                                       .splitlines() if "std::__detail::_" in l or "regex" in l)}
except Exception as exc:
    out["import_error"] = repr(exc)
print(json.dumps(out, indent=1))
PY
report
if [ $BUILD_RC != 0 ]; then say "the build failed: $(tail -20 "$RUN/build.log")"; fi
wait $MODEL_PID
say "model: $(cat "$RUN/model.json" 2>/dev/null) $(tail -3 "$RUN/model.err" 2>/dev/null)"

# -- the load test: numpy first ------------------------------------------------------------------------------------
cat > /tmp/kvgraft-load-test.py <<'PY'
import json, sys
import os
if os.environ.get("LOAD_TEST_LLAMA_FIRST"):
    import llama_cpp  # the other remedy: llama.cpp's libraries loaded before numpy's
import numpy  # first, on purpose: the order in which the unfixed build crashed in std::regex
import llama_cpp as L
L.llama_backend_init()
p = L.llama_model_default_params()
p.n_gpu_layers = -1
m = L.llama_model_load_from_file(sys.argv[1].encode(), p)
if not m:
    raise SystemExit("model did not load")
vocab = L.llama_model_get_vocab(m)
text = b"Hello world, 12 apples and 3.5 pears: the BPE pre-tokenizer's regex runs here."
buf = (L.llama_token * 128)()
n = L.llama_tokenize(vocab, text, len(text), buf, 128, True, False)
print(json.dumps({"loaded": True, "numpy_first": not os.environ.get("LOAD_TEST_LLAMA_FIRST"), "n_gpu_layers": -1,
                  "tokens": n,
                  "gpu_offload": bool(L.llama_supports_gpu_offload())}))
PY
stage load-test 90 load-test.json env LD_DEBUG=bindings LD_DEBUG_OUTPUT=/tmp/kvgraft-ld \
  "$PY" -X faulthandler /tmp/kvgraft-load-test.py "$MODEL"
LOAD_RC=$?
"$PY" - "$RUN/load-test.json" <<'PY'
import glob, json, re, sys
path = sys.argv[1]
try:
    data = json.load(open(path))
except Exception:
    data = {"loaded": False}
cross = std_cross = 0
for f in glob.glob("/tmp/kvgraft-ld.*"):
    for line in open(f, errors="replace"):
        m = re.search(r"binding file (\S+) \[0\] to (\S+) \[0\]: normal symbol `([^']+)'", line)
        if m and "libllama.so" in m.group(1) and "libggml-cuda.so" in m.group(2):
            cross += 1
            std_cross += m.group(3).startswith(("_ZNSt", "_ZSt", "_ZNKSt", "_ZTVNSt", "_ZTINSt"))
data["ld_debug"] = {"libllama_symbols_bound_to_libggml_cuda": cross, "of_them_std": std_cross,
                    "files": len(glob.glob("/tmp/kvgraft-ld.*"))}
json.dump(data, open(path, "w"), indent=1)
PY
rm -f /tmp/kvgraft-ld.*
report

# -- the engine on the GPU -----------------------------------------------------------------------------------------
export KVGRAFT_DATA_DIR=/tmp/kvgraft-data KVGRAFT_CACHE_DIR=/tmp/kvgraft-cache KVGRAFT_MODEL=$MODEL \
  KVGRAFT_GPU_LAYERS=all KVGRAFT_LOG_LEVEL=ERROR
KV=("$PY" -m services.cli)
DC=("$PY" -m bench.device_check)
# the same load with llama_cpp imported first (the load order engine/_load_order.py keeps on a CUDA build: every
# command below relies on it, none is wrapped)
stage load-test-llama-first 60 load-test-llama-first.json env LOAD_TEST_LLAMA_FIRST=1 \
  "$PY" -X faulthandler /tmp/kvgraft-load-test.py "$MODEL"
LOAD_FIRST_RC=$?
stage fingerprint 60 fingerprint.json "${KV[@]}" fingerprint --json
stage selfcheck 90 selfcheck.json "${KV[@]}" selfcheck --json
stage gate-fa-on 90 gate-fa-on.json env KVGRAFT_GRAFT_FLASH_ATTN=true "${KV[@]}" gate --tokens 640 --json
GATE_ON=$?
stage gate-fa-off 90 gate-fa-off.json env KVGRAFT_GRAFT_FLASH_ATTN=false "${KV[@]}" gate --tokens 640 --json
GATE_OFF=$?
stage xdev-fa-on 90 xdev-fa-on.out "${DC[@]}" xdev --model "$MODEL" --flash-attn on \
  --out "$RUN/xdev-fa-on.json"
stage xdev-fa-off 90 xdev-fa-off.out "${DC[@]}" xdev --model "$MODEL" --flash-attn off \
  --out "$RUN/xdev-fa-off.json"
# one process per configuration: a crash (the H200 runs aborted with a CUDA error in a multi-sequence decode) names
# its configuration and loses none of the others
for fa in off on; do
  for kv in streams unified; do
    stage "batch-probe-fa-$fa-$kv" 45 "batch-probe-fa-$fa-$kv.json" "${KV[@]}" bench batch-probe --flash-attn "$fa" \
      --kv "$kv" --json
  done
done
stage bench-restore 120 bench-restore.json "${KV[@]}" bench restore --runs 3 --json
stage regimes-fa-on 60 regimes-fa-on.json env KVGRAFT_GRAFT_FLASH_ATTN=true "${KV[@]}" regimes --prompts 3 --json
stage regimes-fa-off 60 regimes-fa-off.json env KVGRAFT_GRAFT_FLASH_ATTN=false "${KV[@]}" regimes --prompts 3 --json
stage gate-cpu-fa-on 60 gate-cpu-fa-on.json env -u KVGRAFT_GPU_LAYERS KVGRAFT_GRAFT_FLASH_ATTN=true \
  "${KV[@]}" gate --tokens 640 --json

report
tar -C "$RUN" -czf "$OUT/stage-stderr.tar.gz" $(cd "$RUN" && ls ./*.err 2>/dev/null) 2>/dev/null || true
say "report: $OUT/device-check.json ($(wc -c < "$OUT/device-check.json" 2>/dev/null) bytes)"
say "numpy-first load test rc=$LOAD_RC (a measurement), llama_cpp-first rc=$LOAD_FIRST_RC"
[ $BUILD_RC = 0 ] && [ $LOAD_FIRST_RC = 0 ] && [ -s "$OUT/device-check.json" ] && { [ $GATE_ON = 0 ] || [ $GATE_ON = 1 ]; } \
  && { [ $GATE_OFF = 0 ] || [ $GATE_OFF = 1 ]; }
