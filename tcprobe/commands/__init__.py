"""One module per CLI command; ``tcprobe.cli`` registers them."""
