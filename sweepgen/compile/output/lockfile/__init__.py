"""sweep.lock.json: the one typed model, written and read, where a value it holds was written,
its own digest, and the inputs and schema modules it hashes."""
