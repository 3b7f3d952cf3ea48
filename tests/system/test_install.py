"""The install: requirements.txt gives CPU-only torch, never PyPI's CUDA build.

On PyPI, torch 2.13.0 for Linux x86-64 is the CUDA build: it requires nvidia-*, cuda-* and triton
packages, gigabytes of downloads.  requirements.txt adds PyTorch's CPU index and pins 2.13.0+cpu there.

* The file's form: one index line, torch pinned to 2.13.0+cpu on Linux x86-64 and to the same
  2.13.0 elsewhere (markers evaluated for each platform), every other package pinned exactly, and no
  second requirements file to keep in step.
* The install plan of the README's own `pip install` arguments, resolved by pip without installing
  (`--dry-run --ignore-installed --report`): it holds torch 2.13.0+cpu, every pinned package at its
  pin, and no CUDA package; torch's own requirements name none.  This runs with this machine's pip
  configuration, as the README's command does here: the machine cannot reach PyTorch's index, and its
  pip configuration offers the same wheel (torch-2.13.0+cpu) from a local directory, which is where
  the plan takes torch from (the failure message names the source).
  It holds none of the packages the app never imports (sentence-transformers, transformers, scipy,
  scikit-learn), which the MiniLM wheel once brought along.
* The same arguments with the public sources only (pip's configuration files and PIP_* source
  variables dropped): either the plan takes 2.13.0+cpu from PyTorch's index, or pip fails on that
  pin after seeing PyPI's 2.13.0, the CUDA build, and refusing it.  Here it is the second.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.apptest import ROOT

REQUIREMENTS = ROOT / "requirements.txt"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PLATFORMS = {
    "linux-x86_64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
    "linux-aarch64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"},
    "macos-arm64": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"},
    "windows-amd64": {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64"},
}


def requirements_file() -> tuple[list[str], list[Requirement]]:
    """requirements.txt as (option lines, requirements)."""
    options, requirements = [], []
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        (options if line.startswith("-") else requirements).append(line)
    return options, [Requirement(line) for line in requirements]


def torch_pins(platform: dict[str, str]) -> list[str]:
    _, requirements = requirements_file()
    return [str(r.specifier) for r in requirements
            if r.name == "torch" and (r.marker is None or r.marker.evaluate(platform))]


def is_cuda(name: str) -> bool:
    name = canonicalize_name(name)
    return name.startswith(("nvidia-", "cuda-")) or name == "triton"


def test_requirements_pin_cpu_torch_from_pytorchs_cpu_index_on_linux_x86_64():
    options, requirements = requirements_file()
    assert options == [f"--extra-index-url {CPU_INDEX}"]
    assert torch_pins(PLATFORMS["linux-x86_64"]) == ["==2.13.0+cpu"]
    for platform, environment in PLATFORMS.items():
        pins = torch_pins(environment)
        assert len(pins) == 1, f"{platform}: {len(pins)} torch requirements apply: {pins}"
        assert pins[0].removesuffix("+cpu") == "==2.13.0", f"{platform}: torch {pins[0]}, not 2.13.0"
    for requirement in requirements:
        if requirement.name != "torch":
            assert requirement.marker is None and re.fullmatch(r"==[\w.]+", str(requirement.specifier)), (
                f"{requirement}: every package other than torch is pinned exactly, on every platform")
    assert not (ROOT / "requirements-cloud.txt").exists(), "one requirements file for every install"
    test_lines = [line.strip() for line in (ROOT / "requirements-test.txt").read_text().splitlines()]
    assert "-r requirements.txt" in test_lines
    assert not any(line.startswith(("--", "torch")) for line in test_lines), (
        "requirements-test.txt takes torch and the index from requirements.txt")


def readme_pip_arguments() -> list[str]:
    """The arguments of `pip install` in the README's first command."""
    command = re.search(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S).group(1)
    for part in command.split("&&"):
        words = shlex.split(part)
        if words[:1] and words[0].endswith("/pip") and words[1:2] == ["install"]:
            return words[2:]
    raise AssertionError(f"no `pip install` in the README's first command: {command}")


def install_plan(env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """pip's resolution of the README's install command, without installing anything."""
    arguments = readme_pip_arguments()
    assert arguments[-2:] == ["-r", "requirements.txt"], arguments
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", *arguments, "--dry-run", "--ignore-installed", "--quiet",
         "--disable-pip-version-check", "--report", "-"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def planned(result: subprocess.CompletedProcess) -> dict[str, dict]:
    assert result.returncode == 0, result.stderr[-3000:]
    return {canonicalize_name(item["metadata"]["name"]): item for item in json.loads(result.stdout)["install"]}


def assert_cpu_torch_and_no_cuda(plan: dict[str, dict]) -> None:
    assert "torch" in plan, f"torch is not in the install plan: {sorted(plan)}"
    torch = plan["torch"]
    source = torch["download_info"]["url"]
    assert torch["metadata"]["version"] == "2.13.0+cpu", f"torch {torch['metadata']['version']} from {source}"
    cuda = sorted(f"{name} {item['metadata']['version']}" for name, item in plan.items() if is_cuda(name))
    assert not cuda, f"CUDA packages in the install plan: {cuda}"
    cuda_requirements = [line for line in torch["metadata"].get("requires_dist", [])
                         if is_cuda(Requirement(line).name) and "extra ==" not in line]
    assert not cuda_requirements, f"torch from {source} requires CUDA packages: {cuda_requirements}"


def test_the_readme_install_plan_has_cpu_torch_every_pin_and_no_cuda_package():
    assert sysconfig.get_platform() == "linux-x86_64", "the CPU pin applies on Linux x86-64, where this runs"
    plan = planned(install_plan())
    assert_cpu_torch_and_no_cuda(plan)
    _, requirements = requirements_file()
    for requirement in requirements:
        if requirement.name != "torch":
            version = str(requirement.specifier).removeprefix("==")
            assert plan[canonicalize_name(requirement.name)]["metadata"]["version"] == version, requirement
    # What the app never imports (the MiniLM wheel's requirements once brought them, hundreds of MB).
    unused = sorted(set(plan) & {"sentence-transformers", "transformers", "scipy", "scikit-learn"})
    assert not unused, f"the install plan brings packages the app never imports: {unused}"


def test_with_the_public_sources_only_the_plan_is_cpu_torch_or_a_refusal_of_the_cuda_build():
    env = {name: value for name, value in os.environ.items()
           if name not in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX",
                           "PIP_CONSTRAINT", "PIP_REQUIRE_VIRTUALENV")}
    env["PIP_CONFIG_FILE"] = os.devnull  # no pip.conf: PyPI plus the index named in requirements.txt
    result = install_plan(env)
    if result.returncode == 0:
        plan = planned(result)
        assert_cpu_torch_and_no_cuda(plan)
        assert plan["torch"]["download_info"]["url"].startswith(CPU_INDEX.rsplit("/whl", 1)[0])
    else:
        # PyPI was asked and offered 2.13.0 (its CUDA build); pip refused it rather than install it.
        refused = re.search(r"satisfies the requirement torch==2\.13\.0\+cpu \(from versions: ([^)]*)\)",
                            result.stderr)
        assert refused, result.stderr[-3000:]
        assert "2.13.0" in refused.group(1).split(", "), refused.group(0)
        assert "No matching distribution found for torch==2.13.0+cpu" in result.stderr
