"""Two-role debates (solver, critic) and their reward shaping.

Pure modules (no torch at import): ``config`` (the ``debate`` and ``reward_shaping`` sections),
``group`` (transcripts, groups, counterfactual transcripts), ``strategies`` (the shaping strategies),
``shaping`` (their registry and the per-role advantages), ``transcript`` (token attribution),
``metrics``. ``rollout`` and ``trainer`` use torch/TRL and are imported only by trainer.run.
"""
