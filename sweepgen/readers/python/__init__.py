"""Python configs read as data through a small safe evaluator over ast, never imported or run."""
