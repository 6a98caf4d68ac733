"""A plan put on disk all or nothing: the journal that makes a render a transaction, and the writer
(all checks first, then the journal, removals, atomic writes, the lock last); the files it renames
into place were staged by the pipeline (output/staging.py)."""
