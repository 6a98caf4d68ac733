"""Stopping runs: why a run is stopped (left for its supervisor), ``cancel``'s request to a live
``run``'s queue, and SIGTERM/SIGHUP/Ctrl-C as ``run`` takes them."""
