"""Benchmarks: each prints one JSON record (with --json) or a table, comparing alternatives side by side in one
run. Figures go to docs/BENCHMARKS.md with the exact command."""
