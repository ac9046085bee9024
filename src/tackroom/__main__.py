"""``python -m tackroom``: the same as the ``tackroom`` command."""

from tackroom.cli import main

main()
