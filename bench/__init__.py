"""Benchmarks run by ``mnemogate bench …``; each prints one JSON object on stdout."""
