"""Adapters are data: the schema, the built-in tables, and their resolution."""
