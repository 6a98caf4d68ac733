"""`sweepgen check`: the committed generated files against what a render would write, its fast path, the
causes of a stale lock, and the files beside outputs that are not orphans."""
