"""The local executor: runs as processes on this machine, each under its own supervisor, packed onto GPUs
(with NVIDIA MPS on request)."""
