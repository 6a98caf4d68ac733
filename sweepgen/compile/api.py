"""The public functions: what the CLI calls and what other parts (diff, run, report) may call.

Keep these signatures stable; other modules of sweepgen depend on them.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sweepgen import settings
from sweepgen.compile.output import gc_state
from sweepgen.compile.output.lockfile.lock import Lock
from sweepgen.compile.output.pipeline import Plan, compile_spec, variants_of, varying_paths
from sweepgen.compile.schema import export as schema_export
from sweepgen.compile.schema import trl_cli
from sweepgen.compile.schema import validate as schema
from sweepgen.compile.spec import limits
from sweepgen.compile.spec.model import NAME_HINT, SpecModel, display_path, load_spec, name_problem
from sweepgen.compile.spec.variants.context import sweep_view
from sweepgen.compile.spec.variants.expand import Expansion
from sweepgen.errors import Location, SpecError, UserError
from sweepgen.fs import confine, runfs, safefs

if TYPE_CHECKING:  # loaded by render/check when they run: `diff SPEC:VARIANT` only expands a spec
    from sweepgen.compile.check.committed import Report
    from sweepgen.compile.check.fast import Trust
    from sweepgen.compile.output.write.writer import Outcome


def load_and_expand(spec_path: str, out_root: str = "generated") -> Expansion:
    """Load a spec and expand it into resolved variants, with run names and ``derived`` values
    (no validation, no rendering). ``out_root`` only decides how ``sweep.spec`` is spelled."""
    spec = load_spec(spec_path, out_root)
    project = os.path.dirname(os.path.abspath(out_root))
    out_abs = os.path.abspath(out_root)
    return variants_of(
        spec, sweep_view(spec, os.path.relpath(spec.abspath, project).replace(os.sep, "/")), out_abs
    )


def resolve_variant(spec_path: str, variant_name: str, out_root: str = "generated") -> dict[str, Any]:
    """The resolved config of one variant of a spec, e.g. for ``sweepgen diff spec.yaml:name``.

    The returned mapping shares structure with other variants; copy it before mutating it.
    """
    expansion = load_and_expand(spec_path, out_root)
    variant = expansion.by_name(variant_name)
    if variant is None:
        names = [v.name for v in expansion.variants]
        close = difflib.get_close_matches(variant_name, names, n=1)
        hint = (
            f"did you mean `{close[0]}`?"
            if close
            else "variants: " + ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        )
        raise SpecError(
            f"spec has no variant named {variant_name!r}",
            location=Location(expansion.spec.path),
            hint=hint + " (`sweepgen list SPEC` shows them)",
        )
    return variant.config


def project_specs() -> list[str]:
    """The project's specs: ``specs`` of [tool.sweepgen] in pyproject.toml, else the default globs
    (``sweepgen.settings``). Finding none is an error: `check` must never pass by checking nothing."""
    found = settings.load()
    specs = found.spec_files()
    if not specs:
        where = f"[tool.sweepgen] specs in {found.source}" if found.source else "the default globs"
        raise UserError(
            f"no specs given and none found by {where} ({', '.join(found.specs)})",
            hint='name the spec files, or set `specs = ["glob", ...]` under [tool.sweepgen] in '
            "pyproject.toml",
        )
    return specs


def render(
    spec_paths: list[str] | None = None, out_root: str = "generated", *, dry_run: bool = False
) -> list[Outcome]:
    """Compile every spec (None: the project's specs, ``project_specs``), then (unless ``dry_run``)
    write them all; nothing is written on any error.

    Returns one ``sweepgen.compile.output.write.writer.Outcome`` per spec: what was (or would be) created,
    updated,
    left unchanged and removed.
    """
    # A spec whose lock proves nothing changed (every input and file has its recorded hash; see
    # check_fast) is not compiled: its outcome is "all unchanged", read from the lock.
    if spec_paths is None:
        spec_paths = project_specs()
    from sweepgen.compile.check.fast import trusted  # noqa: PLC0415 - see TYPE_CHECKING above
    from sweepgen.compile.output.write import writer  # noqa: PLC0415 - see TYPE_CHECKING above

    trusts = {path: trusted(path, out_root) for path in spec_paths}
    unchanged = _unchanged(spec_paths, trusts)
    plans: list[Plan] = []
    try:
        # every spec's evaluations together: a pull request adding many specs does not add up budgets
        with gc_state.frozen(), limits.command_budget():  # (gc_state: each spec's files, until written)
            _compile_all([p for p in spec_paths if unchanged[p] is None], trusts, out_root, dry_run, plans)
            outcomes = _outcomes(spec_paths, unchanged, writer.plan_actions(plans), out_root)
            if not dry_run:
                writer.apply(outcomes)
    except BaseException:
        _abort_staged(plans)
        raise
    return outcomes


def _abort_staged(plans: list[Plan]) -> None:
    """Delete the files the plans staged but did not put in place."""
    # nothing was written; the last staged first, so a folder an earlier spec made for its sweep
    # (the output root) is empty when it is removed
    for plan in reversed(plans):
        if plan.staging is not None:
            plan.staging.abort()


def _unchanged(spec_paths: list[str], trusts: dict[str, Trust]) -> dict[str, Lock | None]:
    """Each spec's lock where it proves nothing changed (None: compile the spec)."""
    unchanged = {path: _proven(t) for path, t in trusts.items()}
    sweeps = [lk.sweep for lk in unchanged.values() if lk is not None]
    if len(set(sweeps)) != len(sweeps) or (sweeps and len(spec_paths) > len(sweeps)):
        # several specs at once, some changed: compile them all, so two specs writing one sweep
        # folder are caught by plan_actions whichever of them changed
        return dict.fromkeys(spec_paths)
    return unchanged


def _proven(trust: Trust) -> Lock | None:
    """The spec's lock where its verdict found nothing changed (None otherwise)."""
    return trust.verdict.lock if trust.verdict is not None and not trust.verdict.findings else None


def _compile_all(
    changed: list[str], trusts: dict[str, Trust], out_root: str, dry_run: bool, plans: list[Plan]
) -> None:
    """Compile the specs in ``changed`` into ``plans`` (filled as they compile, so the caller can
    undo what was staged). A render that writes stages each spec's files in its sweep folder as they
    are rendered, except a second spec naming a sweep folder already staged: plan_actions refuses
    the pair."""
    staged: set[str] = set()
    for path in changed:
        spec = trusts[path].spec or load_spec(path, out_root)
        plans.append(
            compile_spec(path, out_root, loaded=spec, stream=not dry_run and spec.name not in staged)
        )
        staged.add(spec.name)


def _outcomes(
    spec_paths: list[str], unchanged: dict[str, Lock | None], planned: list[Outcome], out_root: str
) -> list[Outcome]:
    from sweepgen.compile.output.write import writer  # noqa: PLC0415 - see TYPE_CHECKING above

    compiled = iter(planned)
    outcomes = []
    for path in spec_paths:
        recorded = unchanged[path]
        if recorded is None:
            outcomes.append(next(compiled))
            continue
        sweep_dir = os.path.join(os.path.abspath(out_root), recorded.sweep)
        actions = [writer.Action(f.path, writer.UNCHANGED, f.variant, f.run_name) for f in recorded.files]
        outcomes.append(
            writer.Outcome(None, actions, spec_path=display_path(path), shown_dir=display_path(sweep_dir))
        )
    return outcomes


def check(
    spec_paths: list[str] | None = None,
    out_root: str = "generated",
    *,
    orphan_sweeps: bool = False,
    full: bool = False,
) -> Report:
    """Validate specs and compare their rendering with ``out_root``; returns a ``check.Report``.
    ``spec_paths`` None: the project's specs (``project_specs``); then a sweep folder under
    ``out_root`` that none of them produces is an orphan, as with ``orphan_sweeps``.

    Without ``full``, a spec whose every input and generated file still has the hash its lock
    recorded is not rendered again (see ``sweepgen.compile.check.fast``)."""
    if spec_paths is None:
        spec_paths, orphan_sweeps = project_specs(), True
    from sweepgen.compile.check.committed import check as run_check  # noqa: PLC0415 - see TYPE_CHECKING above

    with limits.command_budget():  # a pull request adding many specs does not add up their budgets
        return run_check(spec_paths, out_root, orphan_sweeps=orphan_sweeps, full=full)


def matrix(spec_path: str, out_root: str = "generated") -> tuple[Expansion, list[str]]:
    """The variants of a spec and the leaf paths whose values differ between them."""
    expansion = load_and_expand(spec_path, out_root)
    return expansion, varying_paths(expansion)


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of the spec format (for editor completion)."""
    doc = SpecModel.model_json_schema(by_alias=True)
    doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return doc


def schema_document(ref: str | None = None, out: str | None = None) -> str:
    """The JSON Schema text of the spec format, or (``ref``, ``module:Class``) of that config class;
    also written to the file ``out`` when given (`sweepgen schema -o FILE`)."""
    text = (
        json.dumps(spec_json_schema(), indent=2, sort_keys=True) + "\n"
        if ref is None
        else _export_schema(ref)
    )
    if out is not None:
        # its folder is made when missing (`-o schemas/grpo.json` in a new project), folder by folder
        # from the working directory: a committed `schemas` link is refused (ELOOP), as for init
        try:
            runfs.write_atomic(out, text.encode("utf-8"))
        except OSError as err:
            raise safefs.fs_error(err, out, "write the schema") from None
    return text


def _export_schema(ref: str) -> str:
    """The JSON Schema file text of a dataclass or pydantic model named ``module:Class`` (imports it)."""
    command = trl_cli.command_of(ref)
    if command is not None:  # what `trl <command> --config` accepts, every class it parses
        return schema_export.dumps(trl_cli.command_schema(command, Location(ref)))
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise UserError(
            f"{ref!r} is not `module:Class`",
            hint="e.g. trl:grpo (what `trl grpo --config` takes) or trl:GRPOConfig; a JSON Schema file "
            "is named by a spec's `schema:` instead",
        )
    cls = schema.import_class(module_name, attr, Location(ref))
    return schema_export.dumps(schema_export.export(ref, cls))


def _same_text(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def run_command_hint(schema_ref: str | None) -> str | None:
    """The ``--command`` a sweep started by `init --schema` runs with: ``trl grpo --config {config}``
    for ``trl:grpo``; None for the bundled trainer's schema or none known."""
    command = trl_cli.command_of(schema_ref or "")
    return f"trl {command} --config {{config}}" if command is not None else None


def trl_commands_for(config: Any, named: str = "") -> tuple[list[str], list[str]]:
    """The ``trl`` commands a config given to `init` without ``--schema`` is written for, best first,
    and the keys only those have (schema.trl_guess); empty lists for none."""
    from sweepgen.compile.schema import trl_guess  # noqa: PLC0415 - for `init` alone

    return trl_guess.commands_for(config, named) if isinstance(config, dict) else ([], [])


def trl_command_of_python(config: str) -> str | None:
    """The ``trl`` command a Python config given to `init` builds the class of (``GRPOConfig(...)``:
    ``grpo``); None for another file."""
    from sweepgen.compile import init_spec  # noqa: PLC0415 - for `init` alone

    return init_spec.trl_command_of(config)


def init_project(
    config: str,
    *,
    name: str,
    schema_ref: str | None = None,
    specs_dir: str = "specs",
    templates_dir: str = "templates",
    schemas_dir: str = "schemas",
    out_root: str = "generated",
    grid: Sequence[str] = (),
    seeds: int | None = None,
) -> list[str]:
    """Write a starting spec and template for ``config`` (and, with ``schema_ref``, that class's
    exported schema), then render it; returns the paths written (the spec's, not its generated
    files). Nothing is overwritten, and nothing is left behind when the new spec does not render
    (e.g. the config breaks its own schema). ``grid``, ``seeds``: see init_spec.starter."""
    from sweepgen.compile import init_spec  # noqa: PLC0415 - lazy: the init workflow loads only for `sweepgen init`

    schema_file = None
    files: dict[str, str] = {}
    if schema_ref is not None:
        schema_file = os.path.join(schemas_dir, schema_ref.rpartition(":")[2].lower() + ".json")
        files[schema_file] = _export_schema(schema_ref)
    start = init_spec.starter(
        config,
        name=name,
        specs_dir=specs_dir,
        templates_dir=templates_dir,
        schema_file=schema_file,
        grid=grid,
        seeds=seeds,
        schema_keys=_top_level_defaults(files[schema_file]) if schema_file is not None else None,
    )
    files.update(start.files)
    if schema_file is not None and _same_text(schema_file, files[schema_file]):
        del files[schema_file]  # the same export, from an earlier `init`: shared, not a conflict
    _refuse_taken(files)
    try:
        return _write_then_render(files, start.spec, out_root)
    except schema.SchemaMismatch as err:
        raise _unfit(err, config, schema_ref, start.spec) from None


def _unfit(err: schema.SchemaMismatch, config: str, schema_ref: str | None, spec: str) -> UserError:
    """The schema's refusal worded for `init`: the config and the schema the person named (the
    spec, its variant and the exported file were never written: a value the spec's grid set is
    the ``--grid`` option's)."""
    if err.location is None or err.location.path == spec:  # set by --grid (or --seeds, a grid axis)
        return UserError(
            f"--grid sets a value {schema_ref} refuses: {err.problems}",
            location=Location("--grid"),
            key=err.key,
            hint="fix the value in --grid",
        )
    return UserError(
        f"{config} does not fit {schema_ref}: {err.problems}",
        location=err.location,
        key=err.key,
        hint=_unfit_hint(err, schema_ref),
    )


def _unfit_hint(err: schema.SchemaMismatch, schema_ref: str | None) -> str | None:
    """For a TRL config class, the TRL command schema that takes a whole `trl <command> --config`
    file; else the fix for the value itself (a list where one was written), or the general one."""
    command = schema_ref.rpartition(":")[2].lower().removesuffix("config") if schema_ref else ""
    whole = (
        schema_ref is not None
        and schema_ref.startswith("trl:")
        and trl_cli.command_of(schema_ref) is None  # a class, not already the command's schema
        and command in trl_cli.COMMANDS
    )
    if whole:
        return (
            f"a `trl {command} --config` file also holds TRL's script arguments and ModelConfig "
            f"(model_name_or_path, dataset_name, ...): --schema trl:{command} takes all of it"
        )
    if err.hint in (None, schema.GENERIC_FIX):
        return "fix the config, or give --schema the class the config is written for"
    return err.hint


def check_sweep_name(name: str, *, given: bool, config: str) -> None:
    """``init``'s sweep name (``--name``, else the config file's name) names the spec, template and
    output folder: one no file system refuses, or exit 2 at ``--name`` before anything is written."""
    problem = name_problem(name)
    if problem is not None:
        raise UserError(
            f"sweep name {name!r} {problem}",
            location=Location("--name" if given else config),
            hint=NAME_HINT + ("" if given else "; or give the sweep a name with --name"),
        )


def _top_level_defaults(schema_text: str) -> dict[str, Any]:
    """An exported schema's top-level keys and their defaults (None where it has none)."""
    properties = json.loads(schema_text).get("properties", {})
    return {k: v.get("default") for k, v in properties.items() if isinstance(v, dict)}


def _refuse_taken(files: dict[str, str]) -> None:
    """`init` never overwrites a file."""
    taken = [p for p in files if os.path.exists(p)]
    if taken:
        raise UserError(
            f"{', '.join(taken)} already exist(s); `init` never overwrites a file",
            location=Location(taken[0]),
            hint="choose another --name, or move the file away",
        )


def _write_then_render(files: dict[str, str], spec: str, out_root: str) -> list[str]:
    """Write the new ``files``, then render ``spec``; returns the paths written. Nothing is written
    unless every file renders: on any failure the files and the folders made for them are removed.
    Each file is created new (never overwriting) in its folder, walked from the working directory
    without following a link (``runfs``): a committed ``specs`` link never takes the spec elsewhere."""
    written: list[str] = []
    made = [d for d in dict.fromkeys(os.path.dirname(p) for p in files) if d and not os.path.lexists(d)]
    try:
        for path, text in files.items():
            _write_new(path, text.encode("utf-8"))
            written.append(path)
        render([spec], out_root)
    except BaseException:
        _remove_written(written, made)
        raise
    return written


def _write_new(path: str, data: bytes) -> None:
    try:
        with runfs.parent(path, create=True) as (folder, name):
            safefs.write_new(folder, name, data)
    except FileExistsError:
        _refuse_taken({path: ""})
    except OSError as err:
        if err.errno == errno.ELOOP:
            link = str(err.filename)
            link = os.path.relpath(link) if confine.within(link, os.getcwd()) else link
            raise safefs.UnsafePath(
                f"{link} is a symbolic link: `init` never writes through one",
                where=link,
                kind="symlink",
                hint="name a real folder (--specs-dir, --templates-dir), or replace the link with one",
            ) from None
        raise safefs.fs_error(err, path, "write") from None


def _remove_written(written: list[str], made: list[str]) -> None:
    for path in written:
        with contextlib.suppress(OSError):  # keep the original error
            runfs.unlink(path)
    for folder in reversed(made):
        with contextlib.suppress(OSError):  # only if still empty
            os.rmdir(folder)
