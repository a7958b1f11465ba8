"""A fresh `kvgraft serve` against a warm one, on the real default model: the first chat completion while the checks
run, the same request once /healthz turned ready by itself (the warm-pod time, prompt cache off so both prefill
the whole prompt), then a restart on the same data dir (its checks reused: seconds to ready, no check logged).
Run from the repository root: python scripts/fresh-pod.py; prints one JSON record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.local_servers import free_port

BODY = {"messages": [{"role": "system", "content": "You answer questions about the harbour in one sentence. " * 6},
                     {"role": "user", "content": "Which ships may berth at night?"}],
        "max_tokens": 16, "temperature": 0, "kvgraft": {"cache": False}}


def _pod(data: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "KVGRAFT_DATA_DIR": str(data), "KVGRAFT_LOG_LEVEL": "INFO"}
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(port)], env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            httpx.get(f"{url}/healthz", timeout=1)
            return proc, url
        except httpx.HTTPError:
            assert proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.05)


def _chat(url: str, token: str, model: str, cache: bool = False) -> tuple[float, dict[str, object]]:
    t0 = time.perf_counter()
    r = httpx.post(f"{url}/v1/chat/completions", json={"model": model, **BODY, "kvgraft": {"cache": cache}},
                   headers={"Authorization": f"Bearer {token}"}, timeout=1800)
    r.raise_for_status()
    return round(time.perf_counter() - t0, 3), r.json()["kvgraft"]


def _ready(url: str, t0: float) -> float:
    while httpx.get(f"{url}/readyz", timeout=10).status_code != 200:
        time.sleep(0.1)
    return round(time.perf_counter() - t0, 2)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="kvgraft-fresh-pod-"))
    log = data / "serve.log"
    env = {**os.environ, "KVGRAFT_DATA_DIR": str(data)}
    token = json.loads(subprocess.run([sys.executable, "-m", "services.cli", "tokens", "create", "--team", "t",
                                       "--role", "submitter", "--json"], env=env, check=True, capture_output=True,
                                      text=True).stdout)["token"]
    model = os.environ.get("KVGRAFT_MODEL", "smollm2-135m")
    t0 = time.perf_counter()
    proc, url = _pod(data, log)
    health = httpx.get(f"{url}/healthz").json()
    first_s, first = _chat(url, token, model, cache=True)  # at once: it waits for the model to load
    during = httpx.get(f"{url}/healthz").json()
    checking_s = []  # more while the checks run (the model loaded): each served uncached, one at a time
    while len(checking_s) < 5 and httpx.get(f"{url}/readyz", timeout=10).status_code == 503:
        seconds, k = _chat(url, token, model, cache=True)
        checking_s.append(seconds)
        assert str(k["reason"]).startswith("checking:"), k
        time.sleep(2)
    ready_s = _ready(url, t0)
    warm_s = min(_chat(url, token, model)[0] for _ in range(3))
    proc.terminate()
    stopped = proc.wait(60)
    checked = log.read_text().count("serve.ready")
    t1 = time.perf_counter()
    proc, url = _pod(data, log)
    restart_ready_s = _ready(url, t1)
    proc.terminate()
    proc.wait(60)
    text = log.read_text()
    rechecked = text.count("serve.composition_reused")
    print(json.dumps({"model": model, "health_at_start": health, "health_after_first": during,
                      "first_request_s": first_s, "first_reason": first["reason"],
                      "first_batching": first["batching"]["reason"], "ready_after_s": ready_s,
                      "during_checks_s": checking_s, "warm_request_s": warm_s,
                      "first_over_warm": round(first_s / warm_s, 2),
                      "during_checks_max_over_warm": round(max(checking_s, default=0) / warm_s, 2),
                      "ready_events_first_pod": checked, "restart_ready_after_s": restart_ready_s,
                      "composition_reused_after_restart": rechecked, "first_pod_exit": stopped}, indent=1))


if __name__ == "__main__":
    main()
