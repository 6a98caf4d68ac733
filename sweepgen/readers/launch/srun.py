"""srun's options, so that a launcher line reads the same however its options are spelled.

``srun -N2 -n 8 python train.py`` and ``srun --nodes 2 --ntasks=8 python train.py`` are one command:
both read ``{"--nodes": 2, "--ntasks": 8}``. The table is ``man srun`` (Slurm 22.05, Debian's
slurm-client package): every documented short/long pair and whether each option takes a value,
nothing guessed (tests/readers/test_srun.py holds it to the installed page). srun stops reading
options at the program's name, so the program's own flags are never srun's.
"""

from __future__ import annotations

from sweepgen.readers.launch.slurm_options import Options, with_pyxis

OPTIONS = Options(
    short_to_long={
        "-A": "--account", "-B": "--extra-node-info", "-C": "--constraint", "-D": "--chdir",
        "-E": "--preserve-env", "-F": "--nodefile", "-G": "--gpus", "-H": "--hold", "-I": "--immediate",
        "-J": "--job-name", "-K": "--kill-on-bad-exit", "-L": "--licenses", "-M": "--clusters",
        "-N": "--nodes", "-O": "--overcommit", "-Q": "--quiet", "-S": "--core-spec", "-T": "--threads",
        "-V": "--version", "-W": "--wait", "-X": "--disable-status", "-Z": "--no-allocate",
        "-b": "--begin", "-c": "--cpus-per-task", "-d": "--dependency", "-e": "--error", "-h": "--help",
        "-i": "--input", "-k": "--no-kill", "-l": "--label", "-m": "--distribution", "-n": "--ntasks",
        "-o": "--output", "-p": "--partition", "-q": "--qos", "-r": "--relative", "-s": "--oversubscribe",
        "-t": "--time", "-u": "--unbuffered", "-v": "--verbose", "-w": "--nodelist", "-x": "--exclude",
    },
    value=frozenset({
        "--accel-bind", "--account", "--acctg-freq", "--bb", "--bbf", "--bcast-exclude", "--begin",
        "--chdir", "--cluster-constraint", "--clusters", "--comment", "--constraint", "--container",
        "--core-spec", "--cores-per-socket", "--cpu-bind", "--cpu-freq", "--cpus-per-gpu",
        "--cpus-per-task", "--deadline", "--delay-boot", "--dependency", "--distribution", "--epilog",
        "--error", "--exclude", "--export", "--extra-node-info", "--gid", "--gpu-bind", "--gpu-freq",
        "--gpus", "--gpus-per-node", "--gpus-per-socket", "--gpus-per-task", "--gres", "--gres-flags",
        "--het-group", "--hint", "--input", "--job-name", "--jobid", "--licenses", "--mail-type",
        "--mail-user", "--mcs-label", "--mem", "--mem-bind", "--mem-per-cpu", "--mem-per-gpu", "--mincpus",
        "--mpi", "--msg-timeout", "--network", "--nodefile", "--nodelist", "--nodes", "--ntasks",
        "--ntasks-per-core", "--ntasks-per-gpu", "--ntasks-per-node", "--ntasks-per-socket", "--open-mode",
        "--output", "--partition", "--power", "--prefer", "--priority", "--profile", "--prolog", "--qos",
        "--relative", "--reservation", "--signal", "--slurmd-debug", "--sockets-per-node", "--switches",
        "--task-epilog", "--task-prolog", "--thread-spec", "--threads", "--threads-per-core", "--time",
        "--time-min", "--tmp", "--uid", "--wait", "--wckey"
    }),
    no_value=frozenset({
        "--contiguous", "--disable-status", "--exact", "--help", "--hold", "--label", "--multi-prog",
        "--no-allocate", "--overcommit", "--overlap", "--oversubscribe", "--preserve-env", "--pty",
        "--quiet", "--quit-on-interrupt", "--reboot", "--spread-job", "--test-only", "--unbuffered",
        "--usage", "--use-min-nodes", "--verbose", "--version"
    }),
    optional_value=frozenset({
        "--bcast", "--compress", "--exclusive", "--immediate", "--kill-on-bad-exit", "--nice", "--no-kill",
        "--propagate", "--resv-ports", "--send-libs", "--x11"
    }),
)  # fmt: skip

READ = with_pyxis(OPTIONS)  # what a launch line is read with: pyxis's options too
