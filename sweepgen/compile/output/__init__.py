"""The output transaction: the pipeline that renders every variant (pipeline, render, staging), the lock
(lockfile/), what each rendered file proves before it is written (verify/), and the writer that puts a
plan on disk all or nothing (write/)."""
