"""Adaptive search: the controller (ask, render, run, prune, tell), the Optuna study, each trial rendered
into the sweep folder and its lock, and what commands show of a search."""
