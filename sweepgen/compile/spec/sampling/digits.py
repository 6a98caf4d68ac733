"""How many significant digits a drawn number may be named with: one constant shared by the spec's
model (`sample.digits`) and the lock reader (`report.digits`), in a module of its own so the
run-side commands, which read locks, never load the spec model (pydantic) for it."""

from __future__ import annotations

MAX_DIGITS = 12  # significant digits of a drawn number (a float holds 15-17)
