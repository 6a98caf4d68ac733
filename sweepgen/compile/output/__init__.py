"""The output transaction: rendering every variant, the lock, the journal, staging and the writer that puts
a plan on disk all or nothing."""
