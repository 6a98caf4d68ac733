"""What a rendered file must prove before it is written: it reads back as its kind (every key once,
#SBATCH lines where sbatch reads them), alike in YAML 1.1 and 1.2, each value keeps its type, and
every swept value reaches the files."""
