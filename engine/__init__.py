"""The graft engine: llama.cpp through llama-cpp-python.

Loads models, prefills on a fixed batching grid, captures and restores per-sequence KV state, digests logits,
runs the byte-exactness gate and the positional-regime measurements, and computes the architecture fingerprint.
Imports nothing from store/, workers/ or services/.
"""

from engine._load_order import load_llama_first

load_llama_first()
