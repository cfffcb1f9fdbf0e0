"""Writes the saved program under this folder: a tiny linear model, kept as ``run --artifacts`` keeps one.

Run from the repository root with the Python of the torch environment to save on; the
folder committed here was made with PyPI's torch 2.5.1 (serializer schema 7.3)::

    <torch 2.5.1 environment>/bin/python tests/data/saved_programs/make_linear.py

It is signed with FIXTURE_KEY, a key for tests only, so that the tests can verify it.
Standard library and torch only, like the worker it calls.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_KEY = "saved-programs-fixture-key-for-tests-only"
CASE = "linear"


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
    os.environ["EXPORT_MATRIX_SIGNING_KEY"] = FIXTURE_KEY
    import torch

    from matrix.contract import layout
    from matrix.worker import artifacts
    from matrix.worker.environment import variant_of

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    x = torch.arange(6.0).reshape(2, 3)
    program = torch.export.export(model, (x,))
    target = layout.Target(HERE, variant_of(str(torch.__version__)))
    extra = {"source": "fixture", "skip_check": None}
    folder = artifacts.save(target, CASE, "strict", program, [((x,), {})], [model(x)], extra)
    print(os.path.relpath(folder, HERE))


if __name__ == "__main__":
    main()
