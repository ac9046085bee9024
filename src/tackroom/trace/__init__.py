"""Traces: the normalized event model, and (later) transcripts read back from disk."""
