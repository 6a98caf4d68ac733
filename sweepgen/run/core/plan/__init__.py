"""A generated sweep folder as the runs to start: tasks from its lock, each run's time, the data
digest in its fingerprint, outputs two runs would share, tracker names."""
