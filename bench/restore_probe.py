"""Run in a fresh process by `kvgraft bench restore`: load the model, open a context, then measure how much the
resident set grows at its peak while one block file is read, verified and restored (the KV cache buffers are
allocated before the measurement starts). Prints one JSON object."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.memory import peak_rss_bytes, reset_peak_rss, rss_bytes
from engine.graft import EngineConfig, GraftEngine
from store.blockfile import read_block_file
from workers.logs import configure_logging
from workers.seam import block_to_snapshot
from workers.settings import load_settings


def main(argv: list[str]) -> None:
    configure_logging()
    model, block_path, n_ctx = argv[0], Path(argv[1]), int(argv[2])
    kv_type = argv[3] if len(argv) > 3 else "f16"
    settings = load_settings()
    engine = GraftEngine.load(model, EngineConfig(n_ctx=n_ctx, kv_type=kv_type, gpu_layers=settings.gpu_layers),
                              cache_dir=settings.cache_dir)
    with engine.open_context() as ctx:
        _ = engine.fingerprint
        before = rss_bytes()
        exact_peak = reset_peak_rss()
        snapshot = block_to_snapshot(read_block_file(block_path))
        engine.restore(ctx, snapshot, payload_verified=True)
        peak = peak_rss_bytes()
        state_bytes = len(snapshot.payload)
    print(json.dumps({"rss_before": before, "peak_rss": peak, "peak_growth": peak - before,
                      "state_bytes": state_bytes, "peak_reset": exact_peak}))


if __name__ == "__main__":
    main(sys.argv[1:])
