"""Benchmarks: `python -m bench.NAME` prints figures and a ratio against a baseline."""
