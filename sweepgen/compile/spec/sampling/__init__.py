"""The spec's search blocks: ``sample:`` (random search and its seeded, platform-independent draw),
``search:`` (adaptive search's axes, sampler, pruner) and the digits a drawn number is named with."""
