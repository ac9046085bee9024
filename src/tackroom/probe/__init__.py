"""Probes: run the real harness against the mock and record what it really does."""
