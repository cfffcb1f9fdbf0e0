"""Whether a release's own AOTInductor package loads with the compiling process's Inductor cache kept, and gone.

    python benchmarks/aoti_inductor_cache.py PYTHON

PYTHON is the interpreter of a torch environment (for example, one ``nox -s run`` installed). A small model is
exported and compiled with that release's AOTInductor API (``matrix.worker.aoti``, as the aoti stage compiles), in
a process whose Inductor cache (``TORCHINDUCTOR_CACHE_DIR``) is a folder of this script's. The package is then
loaded, run and compared with eager in a fresh process twice: once with that cache still on disk, once after it
is removed (what a run does at its end, and what a package moved to another machine meets). A release whose
package fails only in the second case depends on the compiling machine's cache, not on the harness.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compile_step(folder: str) -> None:
    import torch

    from matrix.worker import aoti

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    x = torch.randn(3, 8)
    api, missing = aoti.find_api()
    if api is None:
        raise SystemExit("no AOTInductor API: %s" % missing)
    aoti.compile_program(api, torch.export.export(model, (x,)), (x,), {}, os.path.join(folder, api.file))
    torch.save((x, model(x)), os.path.join(folder, "io.pt"))


def load_step(folder: str) -> None:
    import torch

    from matrix.worker import aoti

    kind = next(name for name in os.listdir(folder) if name.startswith("aoti."))
    try:
        run = aoti.load(os.path.join(folder, kind), kind, "cpu")
        x, want = torch.load(os.path.join(folder, "io.pt"))
        got = run(x)
        got = got[0] if isinstance(got, (list, tuple)) else got
        print("RESULT %s" % ("pass" if torch.allclose(got, want) else "mismatch"))
    except Exception as exc:
        first = (str(exc).splitlines() or [""])[0][:200]
        print("RESULT %s.%s: %s" % (type(exc).__module__, type(exc).__name__, first))


def drive(python: str) -> None:
    version = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    print("torch %s" % version)
    for case in ("cache kept", "cache gone"):
        with tempfile.TemporaryDirectory(prefix="aoti-cache-") as work:
            package, cache = os.path.join(work, "package"), os.path.join(work, "cache")
            os.makedirs(package)
            env = dict(os.environ, PYTHONPATH=ROOT, TORCHINDUCTOR_CACHE_DIR=cache)
            subprocess.run([python, __file__, "--compile", package], env=env, check=True, capture_output=True)
            if case == "cache gone":
                shutil.rmtree(cache)
                env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "another-cache")
            done = subprocess.run([python, __file__, "--load", package], env=env, capture_output=True, text=True)
            found = [line[len("RESULT ") :] for line in done.stdout.splitlines() if line.startswith("RESULT ")]
            print("%s: %s" % (case, found[0] if found else "no result (exit %d)" % done.returncode))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--compile":
        compile_step(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--load":
        load_step(sys.argv[2])
    elif len(sys.argv) == 2:
        drive(sys.argv[1])
    else:
        raise SystemExit(__doc__)
