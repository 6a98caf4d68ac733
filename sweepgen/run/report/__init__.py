"""`sweepgen report`: runs collected into rows and curves, seed groups, statistics, importance, and the
CSV, PNG and self-contained HTML outputs."""
