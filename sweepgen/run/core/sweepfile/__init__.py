"""A sweep folder's own record of how it was run: ``.sweepgen-run.json`` (the command line, reused),
replayed only from a file git does not track, and the sweep folder found from a run."""
