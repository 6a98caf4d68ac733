"""Two-role debates (solver, critic) and their reward shaping.

Pure modules (no torch at import): ``config`` (the ``debate`` and ``reward_shaping`` sections),
``group`` (transcripts, groups, counterfactual transcripts), ``branching`` (debates and their
regenerated counterfactual branches, batched per position), ``strategies`` (the shaping strategies),
``shaping`` (their registry and the per-role and per-turn advantages), ``transcript`` (token
attribution), ``metrics``. ``rollout`` and ``trainer`` use torch/TRL and are imported only by run.py.
"""
