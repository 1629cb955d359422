"""The environment is pinned once, and the README's commands are what CI runs."""

from __future__ import annotations

import re
import subprocess

import yaml

from sdsl.paths import ROOT


def _lock_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"requirements.lock: {line!r} is not pinned with =="
        pins[name.lower().replace("_", "-")] = version
    return pins


def _environment_pins() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    pins = {}
    for line in pip_section:
        name, sep, version = line.partition("==")
        assert sep, f"environment.yml: {line!r} is not pinned with =="
        pins[name.lower().replace("_", "-")] = version
    return pins


def test_every_lock_entry_is_pinned_and_environment_yml_agrees():
    lock, env = _lock_pins(), _environment_pins()
    assert set(lock) == set(env), (
        f"only in requirements.lock: {sorted(set(lock) - set(env))}; "
        f"only in environment.yml: {sorted(set(env) - set(lock))} (run `make lock`)"
    )
    differing = {k: (lock[k], env[k]) for k in lock if lock[k] != env[k]}
    assert not differing, f"versions differ (lock, environment.yml): {differing} (run `make lock`)"
    python = [
        d
        for d in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
        if isinstance(d, str) and d.startswith("python")
    ]
    assert python == ["python=3.11"]


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
