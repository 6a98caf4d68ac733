"""#SBATCH directives are keyed by each option's long name: every short/long pair of `man sbatch`."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slurm_man_support import man_page, options_from_man

from sweepgen.readers.launch.sbatch import OPTIONS
from sweepgen.readers.shell.shellconfig import read_shell


def _sbatch(*lines: str) -> dict:
    return read_shell("#!/bin/bash\n" + "".join(f"#SBATCH {line}\n" for line in lines) + "srun true\n").data[
        "sbatch"
    ]


@pytest.mark.parametrize("short", sorted(OPTIONS.short_to_long))
def test_every_short_option_reads_as_its_long_name(short):
    long = OPTIONS.short_to_long[short]
    if long in OPTIONS.no_value:
        assert _sbatch(short) == _sbatch(long) == {long: True}
        return
    if long in OPTIONS.optional_value:
        assert _sbatch(short) == _sbatch(long) == {long: True}
        assert _sbatch(f"{short}v1") == _sbatch(f"{long}=v1") == {long: "v1"}
        return
    expected = {long: "v1"}
    assert _sbatch(f"{short} v1") == _sbatch(f"{short}v1") == _sbatch(f"{long}=v1") == _sbatch(f"{long} v1")
    assert _sbatch(f"{short} v1") == expected
    assert _sbatch(f"{short} v1") != _sbatch(f"{long}=v2")  # a respelled option still compares its value


def test_several_options_on_one_line_and_typed_values():
    assert _sbatch("-N 2 -t 3-00:00:00 -J grpo -o logs/%x.out") == {
        "--nodes": 2,
        "--time": "3-00:00:00",
        "--job-name": "grpo",
        "--output": "logs/%x.out",
    }


def test_getopt_spellings_that_are_not_the_same_value():
    # getopt hands `-J=x` the value "=x" (srun: '"=2" is not a valid node count')
    assert _sbatch("-J=x") == {"--job-name": "=x"} != _sbatch("--job-name=x")
    # only plain decimal integers are numbers: YAML would read 0x10 as 16 and 1e3 as 1000.0
    assert _sbatch("-J 0x10") != _sbatch("-J 16")
    assert _sbatch("-J 1e3") != _sbatch("-J 1000")
    assert _sbatch("--comment=true") != _sbatch("--comment")


def test_bundled_flags_and_a_value_taken_whatever_it_looks_like():
    assert _sbatch("-vv") == _sbatch("-v -v") == {"--verbose": [True, True]}
    assert _sbatch("-Qn4") == {"--quiet": True, "--ntasks": 4}
    assert _sbatch("-J -x") == {"--job-name": "-x"}  # getopt: a required value is the next word
    assert _sbatch("--mem 16G") == _sbatch("--mem=16G") == {"--mem": "16G"}


def test_directive_lines_are_split_as_slurm_splits_them_not_as_a_shell():
    # src/sbatch/opt.c: a backslash takes the next character, inside quotes too, so sbatch reads
    # the job name `atb` from "a\tb" and `a\tb` from "a\\tb" (a shell reads both as `a\tb`)
    assert _sbatch('--job-name="a\\tb"') == {"--job-name": "atb"}
    assert _sbatch('--job-name="a\\\\tb"') == {"--job-name": "a\\tb"}
    assert _sbatch("-J 'it\\'s'") == {"--job-name": "it's"}
    # an unquoted `#` ends the line, inside a word too; a quoted one does not
    assert _sbatch("--nodes=2 # four") == _sbatch("--nodes=2") == {"--nodes": 2}
    assert _sbatch("--job-name=run#1 --nodes=4") == {"--job-name": "run"}
    assert _sbatch('--comment="a # b" -N 2') == {"--comment": "a # b", "--nodes": 2}
    # an empty word ends the line: sbatch never sees the --nodes after it
    assert _sbatch('"" --nodes=2') == {}
    # an unmatched quote (sbatch refuses the script) is kept as its text, compared as written
    assert _sbatch('--job-name="a').keys() == {"(line 2)"}


def test_an_option_whose_value_is_on_the_next_line_is_never_reordered_as_one():
    # sbatch reads all directive lines as one argv: `-J` then `-N2` names the job "-N2" (no node
    # count); `-N2` then `-J` asks for two nodes and gives -J no value. Such a line is kept as text.
    def read(*lines: str) -> dict:
        return _sbatch(*lines)

    assert read("-J", "-N2") != read("-N2", "-J")
    assert read("-vJ", "-N2") != read("-N2", "-vJ")
    assert read("-J x", "-N2") == read("-N2", "-J x")  # complete lines still read as options


def test_slurm_magic_word_lines_are_read_and_kept_apart():
    def read(magic: str, nodes: int) -> dict:
        return read_shell(f"#!/bin/bash\n{magic} --nodes={nodes}\nsrun true\n").data.get("sbatch", {})

    # Slurm reads `#SLURM` lines as `#SBATCH` ones: an edit there is a change
    assert read("#SLURM", 2) == {"#SLURM --nodes": 2} != read("#SLURM", 4)
    assert read("#SLURM", 2) != read("#SBATCH", 2)


@pytest.mark.skipif(not man_page("sbatch").exists(), reason="Debian's slurm-client man page is not installed")
def test_the_table_is_the_man_page():
    assert options_from_man("sbatch") == OPTIONS


def test_sbatch_on_the_command_line_reads_its_options_up_to_the_script():
    # options after the script are the script's own `$1...`: `sbatch job.sh --nodes=2` runs on the
    # default node count, never as `sbatch --nodes=2 job.sh`
    after = read_shell("sbatch job.sh --nodes=2\n").data["commands"]["sbatch"]
    before = read_shell("sbatch --nodes=2 job.sh\n").data["commands"]["sbatch"]
    assert after == {"@script": "job.sh", "@argv": {"--nodes": 2}}
    assert before == {"--nodes": 2, "@script": "job.sh"}
    # sbatch's own spellings are one option, as in `#SBATCH` lines
    spelled = read_shell("sbatch -N 2 --gres gpu:8 job.sh --lr 1\n").data["commands"]["sbatch"]
    assert spelled == {"--nodes": 2, "--gres": "gpu:8", "@script": "job.sh", "@argv": {"--lr": 1}}


# (directives of one script, directives of another): sbatch submits the two as the same job, the
# later of an option given twice replacing the earlier, a number read whatever its leading zeros
_SBATCH_ALIKE = [
    (["--time=1:00:00", "--time=2:00:00"], ["--time=2:00:00"]),
    (["-t 7", "--time=05"], ["--time=5"]),
    (["--time-min=3", "--time-min=04"], ["--time-min=4"]),
    (["--nodes=2", "--nodes=01"], ["--nodes=1"]),  # one node in the cluster: the first would fail
    (["--ntasks=1", "-n 02"], ["--ntasks=2"]),
    (["--cpus-per-task=1", "--cpus-per-task=02"], ["--cpus-per-task=2"]),
    (["--ntasks-per-node=1", "--ntasks-per-node=02"], ["--ntasks-per-node=2"]),
    (["--mincpus=1", "--mincpus=02"], ["--mincpus=2"]),
    (["--ntasks-per-core=01", "--ntasks-per-socket=02"], ["--ntasks-per-core=1", "--ntasks-per-socket=2"]),
    (["--nice=1", "--nice=05"], ["--nice=5"]),
    (
        ["--sockets-per-node=01", "--cores-per-socket=02", "--threads-per-core=01"],
        ["--sockets-per-node=1", "--cores-per-socket=2", "--threads-per-core=1"],
    ),
    (["--job-name=a", "-J b"], ["--job-name=b"]),
    (["--comment=a", "--comment=b"], ["--comment=b"]),
    (
        [
            "--output=/tmp/o1",
            "-o /tmp/o2",
            "--error=/tmp/e1",
            "-e /tmp/e2",
            "-i /dev/zero",
            "--input=/dev/null",
        ],
        ["--output=/tmp/o2", "--error=/tmp/e2", "--input=/dev/null"],
    ),
    (["--mem=100", "--mem=200"], ["--mem=200"]),
    (["--mem-per-cpu=100", "--mem-per-cpu=200"], ["--mem-per-cpu=200"]),
    (["--chdir=/", "-D /tmp"], ["--chdir=/tmp"]),
    (["--begin=now+1hour", "--begin=now+2hours"], ["--begin=now+2hours"]),
    # round eighteen: what was kept as a list (noise) is the last value to sbatch as well
    (["--gres=gpu:0", "--gres=none"], ["--gres=none"]),
    (["--dependency=afterok:1", "--dependency=singleton"], ["--dependency=singleton"]),
    (["--exclude=localhost", "--exclude=none", "--tmp=10", "--tmp=20"], ["--exclude=none", "--tmp=20"]),
    (
        ["--array=1-2", "--array=1-3", "--delay-boot=10", "--delay-boot=20", "--output=/dev/null"],
        ["--array=1-3", "--delay-boot=20", "--output=/dev/null"],
    ),
    (["--switches=1", "--switches=2", "--network=a", "--network=b"], ["--switches=2", "--network=b"]),
    (
        ["--mcs-label=a", "--mcs-label=b", "--exclusive=user", "--exclusive=mcs"],
        ["--mcs-label=b", "--exclusive=mcs"],
    ),
    (
        ["--cpu-freq=low", "--cpu-freq=high", "--container=a", "--container=b"],
        ["--cpu-freq=high", "--container=b"],
    ),
    (["--bb=a", "--bb=b", "--gpu-freq=low", "--gpu-freq=high"], ["--bb=b", "--gpu-freq=high"]),
    (
        ["--gpu-bind=closest", "--gpu-bind=none", "--extra-node-info=1", "--extra-node-info=2"],
        ["--gpu-bind=none", "--extra-node-info=2"],
    ),
    (["--cluster-constraint=a", "--cluster-constraint=b"], ["--cluster-constraint=b"]),
    # getopt_long takes a long option by the one name it begins: `--comm` is `--comment`
    (["--comm=x", "--job=ab", "--time-=3"], ["--comment=x", "--job-name=ab", "--time-min=3"]),
    (["--comment=x", "--comm=y"], ["--comment=y"]),
]
# (directives, directives): another job to sbatch, never equal
_SBATCH_APART = [
    (["--mail-type=BEGIN", "--mail-type=END"], ["--mail-type=END"]),  # they add up: BEGIN,END
    # one option, its last value y against x (two keys that were equal as a mapping)
    (["--comment=x", "--comm=y"], ["--comm=y", "--comment=x"]),
]
# (directive, directive): one time limit or memory request to sbatch, however it is spelled
_SBATCH_SAME_READING = [
    ("--time=60", "--time=1:00:00"),
    ("--time=90", "-t 1:30:00"),
    ("--time=1:30", "--time=2"),  # 1 min 30 s, rounded up to whole minutes
    ("--time=00:59", "--time=1"),
    ("--time=1-0", "--time=24:00:00"),
    ("--time=1-2", "--time=1560"),
    ("--time=1-2:3", "--time=1563"),
    ("--time=1-2:3:4", "--time=1564"),
    ("--time=99:99:99", "--time=4-04:41:00"),
    ("--time=UNLIMITED", "--time=infinite"),
    ("--time=-1", "--time=unlimited"),
    ("--time=0", "--time=UNLIMITED"),  # a limit of 0 is none
    ("--time=0:0", "--time=0"),
    ("--time-min=60", "--time-min=1:00:00"),
    ("--mem=1G", "--mem=1024"),
    ("--mem=1024M", "--mem=1g"),
    ("--mem=1GB", "--mem=1024m"),
    ("--mem=1025K", "--mem=2"),  # kilobytes rounded up to whole megabytes
    ("--mem=1T", "--mem=1048576"),
    ("--mem=0", "--mem=0G"),
    ("--mem-per-cpu=1G", "--mem-per-cpu=1024"),
    ("--mem-per-cpu=1500K", "--mem-per-cpu=2M"),
]
# (directive, directive): another job to sbatch, never equal
_SBATCH_OTHER_READING = [
    ("--time=1:30", "--time=1"),
    ("--time=0", "--time=0:30"),  # no limit, and one minute
    ("--time=1-2", "--time=1:2"),
    ("--time=60", "--time=1:00"),
    ("--mem=1025K", "--mem=1"),
    ("--mem=1G", "--mem=1000"),
    ("--mem=1T", "--mem=1G"),
    ("--mem-per-cpu=1G", "--mem-per-cpu=1M"),
]


# what `scontrol show job` says of a job's request (times that move with the clock left out)
_FIELDS = (
    "TimeLimit", "TimeMin", "NumNodes", "NumTasks", "CPUs/Task", "MinCPUsNode", "NtasksPerN:B:S:C",
    "Socks/Node", "Nice", "JobName", "Comment", "StdOut", "StdErr", "StdIn", "MinMemoryNode",
    "MinMemoryCPU", "WorkDir", "ReqB:S:C:T", "TresPerNode", "Dependency", "ExcNodeList", "MinTmpDiskNode",
    "DelayBoot", "ArrayTaskId", "Switches", "TresBind", "Network", "ClusterFeatures", "MCS_label",
    "OverSubscribe", "CPU_max_freq", "Container", "BurstBuffer", "TresFreq", "NumCPUs", "MailType",
)  # fmt: skip


def _submitted_held(script: Path) -> tuple[subprocess.CompletedProcess[str], str | None, str]:
    """The real sbatch's answer to ``script`` submitted held (from its folder) and, where it took
    it, the job's id and `scontrol show job -o` line, the job cancelled then."""
    done = subprocess.run(
        ["sbatch", "--hold", "--parsable", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=script.parent,
    )
    if done.returncode != 0:
        return done, None, ""
    job = done.stdout.strip().split(";")[0]
    try:
        shown = subprocess.run(
            ["scontrol", "show", "job", "-o", job], capture_output=True, text=True, timeout=60
        ).stdout
    finally:
        subprocess.run(["scancel", job], capture_output=True, timeout=60)
    return done, job, shown


def _job_request(directives: list[str], folder) -> dict[str, str]:
    """What the real sbatch made of a script of these directives (submitted held, then cancelled)."""
    script = folder / "job.sh"
    script.write_text("#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in directives) + "true\n")
    done, job, shown = _submitted_held(script)
    assert job is not None, (directives, done.stderr)
    # (the default output file is named by the job's id)
    fields = dict(
        part.replace(f"slurm-{job}.", "slurm-%j.").split("=", 1) for part in shown.split() if "=" in part
    )
    if "now+" in " ".join(directives):  # the begin time, to the minute from now
        fields["StartTime"] = fields.get("StartTime", "")[:16]
        return {k: fields.get(k, "") for k in (*_FIELDS, "StartTime")}
    return {k: fields.get(k, "") for k in _FIELDS}


@pytest.mark.slurm
@pytest.mark.parametrize(("one", "two"), _SBATCH_ALIKE)
def test_directives_sbatch_submits_alike_are_equal(one, two, slurm_cluster, tmp_path):
    assert _job_request(one, tmp_path) == _job_request(two, tmp_path)  # the oracle: the real sbatch
    assert _sbatch(*one) == _sbatch(*two)


@pytest.mark.parametrize(("one", "two"), _SBATCH_ALIKE)
def test_an_option_given_again_is_its_last_value_and_a_number_its_value(one, two):
    # held to the real sbatch above (a `slurm` test); here without a cluster
    assert _sbatch(*one) == _sbatch(*two)
    # the first value alone is another job: never equal
    assert _sbatch(one[0]) != _sbatch(*two) or one[0].replace(" ", "=") in two


@pytest.mark.slurm
@pytest.mark.parametrize(("one", "two"), _SBATCH_APART)
def test_directives_sbatch_submits_apart_are_a_change(one, two, slurm_cluster, tmp_path):
    assert _job_request(one, tmp_path) != _job_request(two, tmp_path)  # the oracle: the real sbatch
    assert _sbatch(*one) != _sbatch(*two)


@pytest.mark.slurm
def test_gres_given_twice_is_the_last_to_sbatch_and_srun(slurm_cluster, tmp_path):
    # the cluster has no GPUs: a request for one is refused, so the first of two is dropped where
    # the pair is taken, and the last is what is refused
    for script, taken in (("--gres=gpu:1 --gres=none", True), ("--gres=none --gres=gpu:1", False)):
        path = tmp_path / "job.sh"
        path.write_text("#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in script.split()) + "true\n")
        assert (_submitted_held(path)[1] is not None) == taken, script
        srun = subprocess.run(
            ["srun", *script.split(), "true"], capture_output=True, timeout=120, check=False
        )
        assert (srun.returncode == 0) == taken, (script, srun.stderr)
    assert _sbatch("--gres=gpu:1", "--gres=none")["--gres"] == "none"


@pytest.mark.slurm
def test_srun_keeps_the_last_value_and_reads_numbers_as_sbatch_does(slurm_cluster):
    # the oracle: the job srun itself made (its own `scontrol show job`), every LAST_WINS and
    # NUMBERS option of a single-node job given twice
    given = shlex.split(
        "--time=1 --time=03 -J a -J b --comment=x --comm=y --nice=1 --nice=02 --mem=100 --mem=200 "
        "-N 1 --nodes=01 -n 2 -n 01 --ntasks-per-node=2 --ntasks-per-node=1 --mincpus=2 --mincpus=1 "
        "-c 2 -c 1 --time-min=1 --time-min=2"
    )
    script = ["bash", "-c", 'scontrol show job -o "$SLURM_JOB_ID"']
    shown = subprocess.run(["srun", *given, *script], capture_output=True, text=True, timeout=120, check=True)
    fields = dict(part.split("=", 1) for part in shown.stdout.split() if "=" in part)
    read = read_shell(shlex.join(["srun", *given, "python", "t.py"]) + "\n").data["commands"]["t.py"]
    assert read["@launcher"]["srun"] == {
        "--time": fields["TimeLimit"],
        "--job-name": fields["JobName"],
        "--comment": fields["Comment"],
        "--nice": int(fields["Nice"]),
        "--mem": fields["MinMemoryNode"],
        "--nodes": int(fields["NumNodes"]),
        "--ntasks": int(fields["NumTasks"]),
        "--ntasks-per-node": 1,
        "--mincpus": int(fields["MinCPUsNode"]),
        "--cpus-per-task": int(fields["CPUs/Task"]),
        "--time-min": fields["TimeMin"],
    }


def test_an_option_slurm_keeps_every_value_of_stays_a_list():
    assert _sbatch("--mail-type=BEGIN", "--mail-type=END")["--mail-type"] == ["BEGIN", "END"]
    assert _sbatch("--gres=gpu:1", "--gres=gpu:2")["--gres"] == "gpu:2"  # the last (held above)
    assert _sbatch("--nod=1")["--nod"] == 1  # ambiguous to getopt (sbatch refuses it): as written
    assert _sbatch("--job-name=02")["--job-name"] == "02"  # a name, not a number
    assert _sbatch("--nodes=2-04")["--nodes"] == "2-04"  # a range stays as written


@pytest.mark.slurm
@pytest.mark.parametrize(("one", "two"), _SBATCH_SAME_READING)
def test_times_and_sizes_sbatch_reads_alike_are_equal(one, two, slurm_cluster, tmp_path):
    assert _job_request([one], tmp_path) == _job_request([two], tmp_path)  # the oracle: the real sbatch
    assert _sbatch(one) == _sbatch(two)


@pytest.mark.slurm
@pytest.mark.parametrize(("one", "two"), _SBATCH_OTHER_READING)
def test_times_and_sizes_sbatch_reads_apart_are_a_change(one, two, slurm_cluster, tmp_path):
    assert _job_request([one], tmp_path) != _job_request([two], tmp_path)  # the oracle: the real sbatch
    assert _sbatch(one) != _sbatch(two)


def test_a_time_or_size_reads_as_slurm_reads_it():
    # held to the real sbatch above (`slurm` tests); here without a cluster
    for one, two in _SBATCH_SAME_READING:
        assert _sbatch(one) == _sbatch(two), (one, two)
    for one, two in _SBATCH_OTHER_READING:
        assert _sbatch(one) != _sbatch(two), (one, two)
    # a shape sbatch refuses stays as written: a change, never equal to a request it accepts
    assert _sbatch("--mem=1.5G")["--mem"] == "1.5G"
    assert _sbatch("--mem=1GiB") != _sbatch("--mem=1G")
    assert _sbatch("--time=1:2:3:4")["--time"] == "1:2:3:4"
    # and srun reads them as sbatch does (one slurm_opt.c)
    srun = read_shell("srun --time=1:00:00 --mem=1G python t.py\n").data["commands"]["t.py"]["@launcher"][
        "srun"
    ]
    assert srun == {"--time": "01:00:00", "--mem": "1G"}  # as `scontrol show job` prints them


_FIELD = {"--time": "TimeLimit", "--mem": "MinMemoryNode"}
_TIME_SHAPES = st.sampled_from(["{a}", "{a}:{b}", "{a}:{b}:{c}", "{a}-{b}", "{a}-{b}:{c}", "{a}-{b}:{c}:{d}"])
_SIZE_SHAPES = st.sampled_from(["{a}", "{a}K", "{a}m", "{a}G", "{a}t", "{a}GB", "{a}.5G", "{a}Gi"])


@pytest.mark.slurm
@settings(deadline=None, max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    option=st.sampled_from(["--time", "--mem"]),
    parts=st.lists(st.integers(0, 120_000), min_size=4, max_size=4),
    time_shape=_TIME_SHAPES,
    size_shape=_SIZE_SHAPES,
)
def test_a_time_or_size_read_is_what_scontrol_shows(
    option, parts, time_shape, size_shape, slurm_cluster, tmp_path
):
    # the oracle: what the real sbatch took the value for; a value we read as a time or a size is
    # one sbatch accepts and shows as we read it, any other stays as written (a change, never equal)
    a, b, c, d = (p if i == 0 else p % 100 for i, p in enumerate(parts))
    value = (time_shape if option == "--time" else size_shape).format(a=a, b=b, c=c, d=d)
    read = _sbatch(f"{option}={value}")[option]
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH {option}={value}\ntrue\n")
    done, job, shown = _submitted_held(script)
    if job is None:  # refused as written: kept as written; refused for its size: no verdict
        assert "Invalid --" not in done.stderr or read in (value, int(value) if value.isdecimal() else value)
        return
    fields = dict(part.split("=", 1) for part in shown.split() if "=" in part)
    assert read in (fields[_FIELD[option]], value, int(value) if value.isdecimal() else value), (
        value,
        fields[_FIELD[option]],
    )
