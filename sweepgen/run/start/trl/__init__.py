"""The start checks of ``trl <command>`` runs: what TRL, accelerate and transformers would refuse or
ignore once the runs started (command, dataset, a Hub dataset in datasets' cache, env, generation
batch, ignored values, precision, processes, reward functions), and trl_start.py, which reads
each run's config once and hands it to each."""
