"""Sandboxes beyond the local one, registered through the entry-point group ``tackroom.sandboxes``."""
