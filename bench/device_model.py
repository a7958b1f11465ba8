"""A model of a real GGUF's exact layout with random weights, for machines the real file cannot travel to.

    python -m bench.device_model export SRC.gguf LAYOUT.json.gz   (where the model is: its metadata and tensor list)
    python -m bench.device_model build LAYOUT.json.gz DST.gguf    (on the accelerator machine: ~100 MB written)

The layout keeps every metadata field of SRC (hyperparameters, the tokenizer with its vocabulary, merges and
pre-tokenizer) and every tensor's name, shape and type; `build` writes the same file with seeded random weights
(norms 1, matrices N(0, 1/cols), embeddings N(0, 1)) quantized to the same types. For SmolLM2-135M (the default
model) that is its 30 layers, 576-wide, 9 query and 3 KV heads, Q4_1 matrices, Q8_0 embedding, and its own BPE
tokenizer (so loading runs llama.cpp's regex pre-tokenizer), from a 1 MB layout instead of the 98 MB file. The
weights are not the model's: greedy text is noise, but every kernel, shape and type the real model runs is run."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

LAYOUT_VERSION = 1


def export_layout(src: Path, dst: Path) -> dict[str, Any]:
    import gguf

    reader = gguf.GGUFReader(str(src))
    fields = []
    for f in reader.fields.values():
        if f.name.startswith("GGUF."):
            continue
        value = f.contents()
        fields.append({"name": f.name, "types": [int(t) for t in f.types], "value": value})
    tensors = [{"name": t.name, "shape": [int(n) for n in t.shape], "type": int(t.tensor_type)}
               for t in reader.tensors]
    layout = {"version": LAYOUT_VERSION, "source": src.name, "source_bytes": src.stat().st_size,
              "fields": fields, "tensors": tensors}
    with gzip.open(dst, "wt", encoding="utf-8") as out:
        json.dump(layout, out)
    return {"fields": len(fields), "tensors": len(tensors), "bytes": dst.stat().st_size}


def build_model(layout_path: Path, dst: Path, *, seed: int = 20261204) -> dict[str, Any]:
    import gguf

    with gzip.open(layout_path, "rt", encoding="utf-8") as f:
        layout = json.load(f)
    arch = next(f["value"] for f in layout["fields"] if f["name"] == "general.architecture")
    rng = np.random.default_rng(seed)
    tmp = dst.with_suffix(".tmp")
    writer = gguf.GGUFWriter(str(tmp), arch)
    for f in layout["fields"]:
        if f["name"] == "general.architecture":
            continue
        vtype = gguf.GGUFValueType(f["types"][0])
        sub = gguf.GGUFValueType(f["types"][-1]) if vtype == gguf.GGUFValueType.ARRAY else None
        value = f["value"]
        if f["name"] == "general.name":
            value = f"{value} (random weights, layout of {layout['source']}, seed {seed})"
        writer.add_key_value(f["name"], value, vtype, sub_type=sub)
    for t in layout["tensors"]:
        qtype = gguf.GGMLQuantizationType(t["type"])
        shape = tuple(reversed(t["shape"]))  # GGUF lists ne0 first; numpy wants rows first
        if len(shape) == 1:
            data = np.ones(shape, dtype=np.float32)
        elif t["name"] == "token_embd.weight":
            data = rng.standard_normal(shape, dtype=np.float32)
        else:
            data = rng.standard_normal(shape, dtype=np.float32) / np.float32(np.sqrt(shape[-1]))
        if qtype in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            writer.add_tensor(t["name"], data.astype(np.float32 if qtype == gguf.GGMLQuantizationType.F32
                                                     else np.float16))
        else:
            writer.add_tensor(t["name"], gguf.quants.quantize(data, qtype), raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(dst)
    return {"path": str(dst), "bytes": dst.stat().st_size, "tensors": len(layout["tensors"]), "seed": seed,
            "layout_of": layout["source"], "layout_of_bytes": layout["source_bytes"]}


def main(argv: list[str]) -> None:
    if len(argv) == 3 and argv[0] == "export":
        print(json.dumps(export_layout(Path(argv[1]), Path(argv[2]))))
    elif len(argv) == 3 and argv[0] == "build":
        print(json.dumps(build_model(Path(argv[1]), Path(argv[2]))))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
