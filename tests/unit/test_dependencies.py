"""PEP 723 blocks in case files: read without running the case, and the identity of a dependency set."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple

import pytest

from matrix.contract import dependencies
from matrix.contract.case import read_info

CASE_BODY = (
    '"""A case that needs a library."""\n\nimport torch\n\n'
    "model = torch.nn.Identity()\nexample_args = (torch.ones(1),)\n"
)


def case_file(tmp_path: Path, block: str) -> Path:
    path = tmp_path / "needs.py"
    path.write_text(block + CASE_BODY)
    return path


def test_a_case_declares_its_dependencies_and_python_in_a_pep_723_block(tmp_path: Path) -> None:
    block = (
        "# /// script\n"
        "# dependencies = [\n"
        '#   "torchvision",  # the models\n'
        '#   "Transformers < 5",\n'
        "# ]\n"
        '# requires-python = ">=3.9"\n'
        "# [tool.other]\n"
        '# key = "ignored"\n'
        "# ///\n"
    )
    info = read_info(case_file(tmp_path, block), "needs")
    assert info.problem is None
    assert info.dependencies == ("torchvision", "Transformers < 5")
    assert info.requires_python == ">=3.9"
    assert info.description == "A case that needs a library."


def test_a_case_without_a_block_needs_torch_alone(tmp_path: Path) -> None:
    info = read_info(case_file(tmp_path, ""), "needs")
    assert info.problem is None and info.dependencies == () and info.requires_python is None


@pytest.mark.parametrize(
    ("block", "line", "says"),
    [
        ('# /// script\n# dependencies = "torchvision"\n# ///\n', 1, "must be a list of requirement strings"),
        ('\n\n# /// script\n# dependencies = ["torchvision"]\n', 3, "never closed"),
        ('# /// script\n# dependencies = ["-bad"]\n# ///\n', 1, "is not a requirement"),
        ('# /// script\n# requires-python = "three"\n# ///\n', 1, "version specifier"),
        ('# /// script\n# dependencies = ["a"]\n# ///\n# /// script\n# dependencies = ["b"]\n# ///\n', 4, "second"),
    ],
)
def test_a_malformed_block_is_a_problem_naming_the_file_and_line(
    tmp_path: Path, block: str, line: int, says: str
) -> None:
    path = case_file(tmp_path, block)
    info = read_info(path, "needs")
    assert info.problem is not None
    assert info.problem.startswith("%s:%d:" % (path, line)) and says in info.problem


def test_the_small_reader_agrees_with_tomllib_on_what_cases_write() -> None:
    text = 'dependencies = [\n  "torchvision>=0.20",  # a comment\n  "timm",\n]\nrequires-python = ">=3.10"\n'
    import tomllib

    assert dependencies._small_toml(text, "x.py", 1) == tomllib.loads(text)


def test_a_set_is_the_same_whatever_the_order_spacing_or_spelling_of_its_names() -> None:
    one = dependencies.set_key(["Transformers < 5", "torchvision"])
    assert one == dependencies.set_key(["torchvision", "transformers<5"]) == "torchvision + transformers<5"
    assert dependencies.set_key([]) == "" and dependencies.set_suffix("") == ""
    assert dependencies.set_suffix(one) != dependencies.set_suffix("torchvision")
    assert dependencies.key_requirements(one) == ("torchvision", "transformers<5")
    assert dependencies.name_of("Pillow_SIMD[extra]>=1; python_version>'3'") == "pillow-simd"


@pytest.mark.parametrize(
    ("specifier", "version", "expected"),
    [
        (">=3.10", (3, 11, 7), True),
        (">=3.10,<3.11", (3, 11, 7), False),
        ("==3.11.*", (3, 11, 2), True),
        ("!=3.11.*", (3, 11, 2), False),
        ("~=3.9", (3, 12, 0), True),
        ("~=3.9.1", (3, 10, 0), False),
        ("three", (3, 11, 0), None),
    ],
)
def test_requires_python_is_judged_without_packaging(
    specifier: str, version: Tuple[int, ...], expected: Optional[bool]
) -> None:
    assert dependencies.python_satisfies(specifier, version) is expected
    if expected is not None:
        from packaging.specifiers import SpecifierSet

        assert (".".join(map(str, version)) in SpecifierSet(specifier)) is expected  # the host's own reading agrees


def test_an_error_raised_inside_a_declared_library_is_laid_at_its_door() -> None:
    pytest_version = dependencies.installed(["pytest"])["pytest"]
    assert pytest_version is not None
    with pytest.raises(pytest.fail.Exception) as caught:
        pytest.fail("raised in the library's own code")
    assert dependencies.blamed(caught.value, ["pytest>=7"]) == ("pytest", pytest_version)
    assert dependencies.blamed(caught.value, ["packaging"]) is None  # the case named another library
    assert dependencies.blamed(ValueError("the case's own"), ["pytest"]) is None
