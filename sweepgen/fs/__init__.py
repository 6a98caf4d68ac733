"""The ground floor's file system: the one atomic writer, paths read from files confined to the
project, the output tree and run folders walked by descriptor without following links, the
names of the files sweepgen leaves, and git asked read-only."""
