"""The GitHub Action (action.yml): its metadata holds together, and the README's workflow uses it as it is."""

from __future__ import annotations

import re
from typing import Any, Dict, List

import yaml

from conftest import ROOT

ACTION = ROOT / "action.yml"
README = ROOT / "README.md"
# Variables a step may read that GitHub sets for every step.
GITHUB_VARIABLE = re.compile(r"(GITHUB|RUNNER)_[A-Z_]+$")


def action() -> Dict[str, Any]:
    loaded = yaml.safe_load(ACTION.read_text())
    assert isinstance(loaded, dict), "action.yml is not a YAML mapping"
    return loaded


def steps() -> List[Dict[str, Any]]:
    return list(action()["runs"]["steps"])


def expressions(value: Any) -> List[str]:
    """Every ``${{ ... }}`` expression in a value of the metadata, however deep."""
    if isinstance(value, dict):
        return [e for key, item in value.items() for e in expressions(key) + expressions(item)]
    if isinstance(value, list):
        return [e for item in value for e in expressions(item)]
    return re.findall(r"\$\{\{(.*?)\}\}", value) if isinstance(value, str) else []


def test_the_action_is_a_composite_of_steps_that_each_name_their_shell() -> None:
    found = action()
    assert {"name", "description", "inputs", "outputs", "runs"} <= set(found)
    assert found["runs"]["using"] == "composite"
    for step in steps():
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") == "bash", "a composite run step needs its shell: %s" % step.get("name")


def test_every_input_it_reads_is_declared_and_every_declared_one_is_read() -> None:
    declared = set(action()["inputs"])
    read = set(re.findall(r"\binputs\.([\w-]+)", " ".join(expressions(action()["runs"]))))
    assert read == declared
    assert [name for name, spec in action()["inputs"].items() if spec.get("required")] == ["cases"]
    assert all("default" in spec for name, spec in action()["inputs"].items() if name != "cases")


def test_every_step_output_it_reads_comes_from_an_earlier_step_that_writes_it() -> None:
    seen: Dict[str, Dict[str, Any]] = {}
    for step in steps():
        for used in re.findall(r"\bsteps\.([\w-]+)\.outputs\.([\w-]+)", " ".join(expressions(step))):
            assert used[0] in seen, "step %s reads steps.%s before it ran" % (step.get("name") or step["uses"], used[0])
            writes(seen[used[0]], used[1])
        if "id" in step:
            seen[step["id"]] = step
    for name, output in action()["outputs"].items():
        ((step_id, key),) = re.findall(r"\bsteps\.([\w-]+)\.outputs\.([\w-]+)", output["value"])
        assert step_id in seen and output["description"], name
        writes(seen[step_id], key)


def writes(step: Dict[str, Any], key: str) -> None:
    """A step writes output ``key``: its script appends ``key=`` to $GITHUB_OUTPUT, or it is an action's output."""
    if "run" in step:
        assert re.search(r'echo "%s=' % re.escape(key), step["run"]), "step %s never writes %s" % (step["id"], key)
    else:
        assert step["uses"].startswith(("actions/setup-python@", "actions/cache/restore@")), step["uses"]


def test_each_script_reads_only_variables_its_step_sets_or_github_gives() -> None:
    for step in steps():
        if "run" not in step:
            continue
        script, given = step["run"], set(step.get("env") or {})
        assigned = set(re.findall(r"(?:^|[\s;()|&])([A-Za-z_]\w*)=", script))
        for name in set(re.findall(r"\$\{?([A-Za-z_]\w*)", script)):
            assert name in given | assigned or GITHUB_VARIABLE.match(name), "%s reads $%s" % (step["name"], name)
        # Inputs reach a script through its environment, never pasted into its text (a quote in an input
        # would otherwise end the string and run the rest as a command).
        assert not expressions(script), step["name"]


def readme_workflow() -> str:
    section = README.read_text().split("### Checking your own models: the GitHub Action\n", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_readme_workflow_is_ten_lines_that_use_the_action_as_declared() -> None:
    text = readme_workflow()
    assert len(text.splitlines()) <= 10
    workflow = yaml.safe_load(text)
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("uses", "").endswith("/torch-export-matrix@v1")]
    assert set(step["with"]) <= set(action()["inputs"]) and "cases" in step["with"]
    assert "nightly" in step["with"]["torch"].split()


def test_environments_the_selection_does_not_use_are_removed_before_the_cache_is_saved() -> None:
    found = steps()
    names = [step.get("name") or step["uses"] for step in found]
    removing = names.index("Remove the environments the selection does not use")
    saving = [i for i, step in enumerate(found) if "envs" in str((step.get("with") or {}).get("path"))]
    assert names.index("Check the cases") < removing < names.index("Name the installed environments") < saving[-1]
    step, checked = found[removing], found[names.index("Check the cases")]
    # The selection the check ran, in the folders it used: a command to run the same way on one's machine.
    for name in ("TORCH", "VARIANT", "UV_CACHE_DIR", "EXPORT_MATRIX_ENV_DIR"):
        assert step["env"][name] == checked["env"][name]
    assert 'python -m matrix.envs.removal --keep $TORCH ${VARIANT:+--variant "$VARIANT"}' in step["run"]
    assert step["if"] == "${{ !cancelled() && inputs.cache == 'true' }}"
