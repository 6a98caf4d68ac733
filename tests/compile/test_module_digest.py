"""A schema module's identity: its source and what it imports from its own package, read not imported."""

from __future__ import annotations

from sweepgen.compile.output.lockfile.module_digest import released_version, source_digest


def _package(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(root / "pkg" / "config.py")


def test_the_digest_follows_the_package_s_imports_and_nothing_else(tmp_path):
    source = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/config.py": "from .sub import rules\nimport os\nfrom pkg import helpers\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/rules.py": "LIMIT = 1\n",
            "pkg/helpers.py": "X = 1\n",
            "pkg/unrelated.py": "Y = 1\n",
        },
    )
    first = source_digest("pkg.config", source)
    assert first is not None and len(first) == 64
    (tmp_path / "pkg/unrelated.py").write_text("Y = 2\n")
    assert source_digest("pkg.config", source) == first  # not imported: not part of it
    (tmp_path / "pkg/sub/rules.py").write_text("LIMIT = 2\n")
    changed = source_digest("pkg.config", source)
    assert changed != first  # a validator's module changed: so did the schema
    (tmp_path / "pkg/helpers.py").write_text("X = 2\n")
    assert source_digest("pkg.config", source) not in (first, changed)


def test_the_same_code_in_another_folder_has_the_same_digest(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/config.py": "from . import base\n", "pkg/base.py": "B = 1\n"}
    a = _package(tmp_path / "editable", files)
    b = _package(tmp_path / "site-packages", files)
    assert source_digest("pkg.config", a) == source_digest("pkg.config", b)


def test_a_release_from_an_index_is_named_by_its_version_a_local_install_is_not():
    assert released_version("pydantic") is not None and released_version("pydantic").startswith("pydantic==")
    assert released_version("no_such_package_here") is None


def test_a_module_nested_past_python_s_parser_has_a_digest_and_no_traceback(tmp_path):
    """A schema module `check` digests (a pull request's) nested past Python's parser: its
    RecursionError (`a.b.b...`) or MemoryError (`----1`, said by the CLI as "out of memory ... the
    sweep is larger than this machine holds") ended the command. Its bytes are digested; its
    imports are none (Python cannot import it either)."""
    for deep in ("x = a" + ".b" * 300_000 + "\n", "x = " + "-" * 200_000 + "1\n"):
        source = _package(tmp_path / str(len(deep)), {"pkg/__init__.py": "", "pkg/config.py": deep})
        digest = source_digest("pkg.config", source)
        assert digest is not None and len(digest) == 64
