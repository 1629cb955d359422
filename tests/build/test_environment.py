"""The environment is pinned once, and the README's commands are what CI runs."""

from __future__ import annotations

import re
import subprocess

import yaml

from sdsl.paths import ROOT


def _lock_entries() -> dict[str, tuple[str, list[str]]]:
    r"""``name -> (version, hashes)`` of requirements.lock (uv's format: ``name==version \`` then
    ``--hash=sha256:...`` continuation lines)."""
    text = (ROOT / "requirements.lock").read_text().replace("\\\n", " ")
    entries = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        spec, *options = line.split()
        name, sep, version = spec.partition("==")
        assert sep, f"requirements.lock: {spec!r} is not pinned with =="
        hashes = [o.removeprefix("--hash=") for o in options if o.startswith("--hash=")]
        entries[name.lower().replace("_", "-")] = (version, hashes)
    return entries


def _lock_pins() -> dict[str, str]:
    return {name: version.split("+")[0] for name, (version, _) in _lock_entries().items()}


def test_every_lock_entry_is_pinned_with_hashes():
    """pip installs requirements.lock in hash-checking mode: every distribution's sha256 is fixed,
    so an index serving another file under the same version (torch's CUDA build for the CPU one)
    fails the install instead of changing the environment."""
    entries = _lock_entries()
    assert len(entries) > 100, f"requirements.lock holds {len(entries)} packages: was it truncated?"
    unhashed = [n for n, (_, hashes) in entries.items() if not hashes]
    assert not unhashed, f"requirements.lock: no --hash for {unhashed} (run `make lock`)"
    bad = {n: h for n, (_, hashes) in entries.items() for h in hashes if not re.fullmatch(r"sha256:[0-9a-f]{64}", h)}
    assert not bad, f"requirements.lock: malformed hashes {bad}"
    assert entries["torch"][0].endswith("+cpu"), f"torch is pinned to {entries['torch'][0]}, not the CPU build"


def test_environment_yml_installs_the_lock():
    """The conda environment has no pins of its own: its pip section installs requirements.lock."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    assert [d for d in deps if isinstance(d, str) and d.startswith("python")] == ["python=3.11"]
    pip_section = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert "-r requirements.lock" in pip_section, pip_section
    assert all(line.startswith("-") for line in pip_section), f"environment.yml pins packages itself: {pip_section}"


def test_every_top_level_requirement_is_in_the_lock():
    lock = _lock_pins()
    for line in (ROOT / "requirements.in").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name = re.split(r"[=<>!\[ ]", line)[0].lower().replace("_", "-")
        assert name in lock, f"requirements.in names {name!r}, which requirements.lock does not pin"


def test_installed_versions_match_the_lock():
    from importlib.metadata import PackageNotFoundError, version

    lock = _lock_pins()
    wrong = {}
    from sdsl.build.manifest import PACKAGES

    for name in PACKAGES:  # the distributions whose versions decide the numbers and the pictures
        try:
            got = version(name).split("+")[0]
        except PackageNotFoundError:
            got = None
        if got != lock[name]:
            wrong[name] = (got, lock[name])
    assert not wrong, f"installed (got, pinned): {wrong}; reinstall with `make install`"


def test_readme_opens_with_the_two_commands_and_ci_runs_the_second():
    lines = (ROOT / "README.md").read_text().splitlines()
    commands = [re.match(r"^([12])\. `([^`]+)`", line) for line in lines[:6]]
    found = [(m.group(1), m.group(2)) for m in commands if m]
    assert found == [("1", "make book"), ("2", "make test")], found
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci, ".ci/run must take its command from README.md"
    # run the very extraction .ci/run uses, and check it yields the README's second command
    extract = ci.split("cmd=$(", 1)[1].split(")\n", 1)[0]
    out = subprocess.run(["bash", "-c", extract], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "make test"
