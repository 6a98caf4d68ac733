"""Container wrappers (`apptainer exec`, `singularity exec`, `enroot start`) are peeled off like
`srun` and `torchrun`: the program inside is compared as a program, the wrapper's options (read
by its own option table, sweepgen/readers/launch/containers.py) and image under `@launcher`."""

from __future__ import annotations

import pytest
from diff_support import line_changes

from sweepgen.readers.shell.shellconfig import read_shell


def _commands(script: str) -> dict:
    return read_shell(script + "\n").data["commands"]


@pytest.mark.parametrize("wrapper", ["apptainer exec --nv", "singularity exec -e", "enroot start --rw"])
def test_the_program_inside_a_container_is_read_as_a_program(wrapper):
    command = _commands(f"{wrapper} img.sif python t.py --lr 1")["t.py"]
    launcher = wrapper.rsplit(" ", 1)[0]
    assert command["--lr"] == 1 and command["@launcher"][launcher]["@image"] == "img.sif"


def test_a_value_option_takes_the_next_word_and_a_switch_none():
    # `--nv` takes no value: the image is not swallowed (it was: `--nv: [img.sif, python, t.py]`)
    one = _commands("apptainer exec --nv -B /a:/a img.sif python t.py")["t.py"]["@launcher"]["apptainer exec"]
    assert one == {"--nv": True, "--bind": "/a:/a", "@image": "img.sif"}
    # pflag's spellings of one option are one option; switches bundle, a value may be attached
    for spelled in ("--bind=/a -e", "-B/a --cleanenv", "-B=/a -e", "-eB /a", "-eB/a"):
        got = _commands(f"apptainer exec {spelled} img.sif python t.py")["t.py"]["@launcher"][
            "apptainer exec"
        ]
        assert got == {"--bind": "/a", "--cleanenv": True, "@image": "img.sif"}, spelled


def test_edits_inside_and_around_the_container_are_changes(tmp_path):
    base = "apptainer exec --nv img.sif python t.py --lr 1"
    assert line_changes(base, base.replace("--lr 1", "--lr 2"), tmp_path) == ['commands["t.py"].--lr']
    assert line_changes(base, base.replace("img.sif", "img2.sif"), tmp_path)
    assert line_changes(base, base.replace("--nv ", ""), tmp_path)
    assert line_changes(base, base.replace("--nv", "--nv -B /data"), tmp_path)
    assert line_changes(base, base.replace("apptainer", "singularity"), tmp_path)


def test_a_line_with_an_option_the_table_lacks_is_not_peeled():
    # reading an unknown option as a switch (or as taking a value) could take the image for a
    # value or the reverse: the words stay the command's, compared as before
    assert "t.py" not in _commands("apptainer exec --brand-new img.sif python t.py --lr 1")
    assert "t.py" not in _commands("enroot start -x img python t.py")


@pytest.mark.parametrize(
    ("options", "read"),
    [
        # SingularityCE's own (cmd/internal/cli/action_flags.go): switches and options with a value
        ("--no-setgroups --nv", {"--no-setgroups": True, "--nv": True}),
        ("--oci --keep-layers", {"--oci": True, "--keep-layers": True}),
        ("--no-pid --no-compat --sif-fuse", {"--no-pid": True, "--no-compat": True, "--sif-fuse": True}),
        ("--data d.sif --device nvidia.com/gpu=all", {"--data": "d.sif", "--device": "nvidia.com/gpu=all"}),
        ("--netns-path=/run/netns/a --tmp-sandbox", {"--netns-path": "/run/netns/a", "--tmp-sandbox": True}),
    ],
)
def test_singularityce_options_are_read_as_singularityce_reads_them(options, read):
    command = _commands(f"singularity exec {options} img.sif python t.py --lr 1")["t.py"]
    assert command["--lr"] == 1 and command["@launcher"]["singularity exec"] == {**read, "@image": "img.sif"}


def test_a_singularityce_switch_respelled_is_no_change_and_the_program_inside_is_compared(tmp_path):
    base = "singularity exec --oci --data=d.sif img.sif python t.py --lr 1"
    assert line_changes(base, base.replace("--data=d.sif", "--data d.sif"), tmp_path) == []
    assert line_changes(base, base.replace("--lr 1", "--lr 2"), tmp_path) == ['commands["t.py"].--lr']


@pytest.mark.parametrize(
    ("options", "read"),
    [
        # apptainer's own newest table (action_flags.go at 917d665, the flags registered for exec)
        ("--sharens --no-pid", {"--sharens": True, "--no-pid": True}),
        ("--compat32 --intel-hpu", {"--compat32": True, "--intel-hpu": True}),
        (
            "--device nvidia.com/gpu=all --cdi-dirs /etc/cdi",
            {"--device": "nvidia.com/gpu=all", "--cdi-dirs": "/etc/cdi"},
        ),
        ("--netns-path /run/netns/a --no-env HOME", {"--netns-path": "/run/netns/a", "--no-env": "HOME"}),
        # SingularityCE's switch, read as the switch it is (apptainer itself refuses it)
        ("--oci --nv", {"--oci": True, "--nv": True}),
    ],
)
def test_apptainer_options_of_its_newest_table_are_peeled(options, read, tmp_path):
    command = _commands(f"apptainer exec {options} img.sif python t.py --lr 1")["t.py"]
    assert command["--lr"] == 1 and command["@launcher"]["apptainer exec"] == {**read, "@image": "img.sif"}
    base = f"apptainer exec {options} img.sif python t.py --lr 1"
    assert line_changes(base, base.replace("--lr 1", "--lr 2"), tmp_path) == ['commands["t.py"].--lr']
    flag = options.split()[0]
    removed = f"{flag} {read[flag]}" if read[flag] is not True else flag
    assert line_changes(base, base.replace(removed, ""), tmp_path) == [
        f'commands["t.py"].@launcher["apptainer exec"].{flag}'
    ]
