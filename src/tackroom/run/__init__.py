"""Running harnesses: the process layer, the runner, the Result."""
