"""The result cache follows every file a cell read and the variables that steer torch: real runs, one edit between.

Each case passes until one thing it depends on is edited so that its export fails; the second run with
the same cache must run it again and record the failure, while cells that depend on nothing edited are
reused. (Before the manifest of reads, every one of these cells reused its old ``pass``.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from matrix.worker import manifests, reuse

from conftest import ROOT, read_cells, run_matrix

# Raised by a model whose forward was broken by an edit: its export fails.
BROKEN = "raise RuntimeError('broken by an edit')"
# A variable of the documented prefixes (matrix/worker/reuse.py, KEY_PREFIXES); g_env's model follows it.
STEER = "TORCHDYNAMO_MATRIX_TEST_BREAK"


def model(body: str = "return x + 1", head: str = "") -> str:
    """A case module's model: ``body`` is its forward."""
    return head + "\nimport torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        %s\n" % body


def case(imports: str, make: str = "Model()") -> str:
    """A case file: ``imports`` (any code run first), then its model ``make`` and one input."""
    doc = '"""A case whose model comes from elsewhere."""\n'
    return doc + "import torch\n%s\n\nmodel = %s\nexample_args = (torch.ones(3),)\n" % (imports, make)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def layout(tmp: Path) -> Dict[str, Path]:
    """The cases, each reaching its model another way, and what each edit touches."""
    cases, outside = tmp / "cases", tmp / "outside"
    write(cases / "pkg" / "__init__.py", "")
    write(cases / "pkg" / "blocks.py", model())
    write(cases / "a_package.py", case("from pkg.blocks import Model"))
    write(cases / "nested" / "__init__.py", "")
    write(cases / "nested" / "outer.py", "from .inner.impl import Model  # noqa: F401\n")
    write(cases / "nested" / "inner" / "__init__.py", "")
    write(cases / "nested" / "inner" / "impl.py", model())
    write(cases / "b_nested.py", case("from nested.outer import Model"))
    write(cases / "helper_mod.py", model())
    write(cases / "c_importlib.py", case("import importlib", 'importlib.import_module("helper_mod").Model()'))
    write(outside / "extpkg" / "__init__.py", "")
    write(outside / "extpkg" / "model.py", model())
    write(cases / "d_editable.py", case("from extpkg.model import Model"))
    write(cases / "scale.txt", "1\n")
    opened = (
        "import os\n\nwith open(os.path.join(os.path.dirname(__file__), 'scale.txt')) as f:\n    SCALE = f.read()\n"
    )
    write(cases / "e_open.py", case(opened, "torch.nn.Identity() if SCALE.strip() == '1' else None"))
    weights = cases / "weights.pt"
    loads = "import os\n\nOK = torch.load(os.path.join(os.path.dirname(__file__), 'weights.pt'))['ok']"
    write(cases / "f_torch_load.py", case(loads, "torch.nn.Identity() if OK else None"))
    steered = "import os\n\nSTEERED = os.environ.get('%s')" % STEER
    write(cases / "g_env.py", case(steered, "None if STEERED else torch.nn.Identity()"))
    write(cases / "y_plain.py", case("", "torch.nn.Identity()"))
    write(cases / "z_sibling.py", case("", "torch.nn.Identity()"))
    write(cases / "unrelated.txt", "nothing reads this\n")
    subprocess.run(
        [sys.executable, "-c", "import sys, torch; torch.save({'ok': True}, sys.argv[1])", str(weights)], check=True
    )
    return {"cases": cases, "outside": outside, "weights": weights}


def run(
    tmp: Path, out: str, cases: List[Path], *extra: str, steer: bool = False, variables: Optional[Dict[str, str]] = None
) -> subprocess.CompletedProcess:
    """``export-matrix run`` of ``cases`` with the shared cache, the folder ``outside`` on PYTHONPATH as an
    editable install's folder is on sys.path; ``steer``: with a variable that steers torch set; ``variables``:
    more of them."""
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp / "outside")]), **(variables or {}))
    environ.pop(STEER, None)
    if steer:
        environ[STEER] = "1"
    words = ["--cases", *map(str, cases), "--out", str(tmp / out), "--mode", "strict", "--stages", "check"]
    words += ["--cache", str(tmp / "cache"), "--progress", "lines", *extra]
    proc = subprocess.run(
        [sys.executable, "-m", "matrix", "run", *words], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def cells(folder: Path) -> Dict[str, Dict]:
    return {r["case"]: r for r in read_cells(folder)}


# Run in a process of its own: an audit hook, once added, stays for the life of its process.
RECORD = """
import importlib, json, os, sys
from matrix.worker import reads
sys.path.insert(0, sys.argv[1])
if sys.argv[3] == "allowed":
    reads.allow()
recording = reads.start()
importlib.import_module("helper")
import json.decoder  # the standard library: never recorded
with open(os.path.join(sys.argv[1], "data.txt")) as f:
    f.read()
with open(os.path.join(sys.argv[1], "written.txt"), "w") as f:
    f.write("out")
with open(os.path.join(sys.argv[1], "written.txt")) as f:  # read back what it wrote: an output, not an input
    f.read()
with open(os.path.join(sys.argv[2], "scratch.txt"), "w") as f:
    f.write("x")
with open(os.path.join(sys.argv[2], "scratch.txt")) as f:
    f.read()
print(json.dumps(None if recording is None else recording.finish(os.path.join(sys.argv[1], "case.py"))))
"""


def record(tmp_path: Path, allowed: bool = True) -> object:
    cases, scratch = tmp_path / "cases", tmp_path / "scratch"
    cases.mkdir()
    scratch.mkdir()
    (cases / "helper.py").write_text("VALUE = 1\n")
    (cases / "data.txt").write_text("42\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(scratch))  # the run's own folder in a real run
    done = subprocess.run(
        [sys.executable, "-c", RECORD, str(cases), str(scratch), "allowed" if allowed else "inline"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def test_a_cell_process_records_the_modules_and_files_it_read_and_nothing_it_wrote_or_the_stdlib(
    tmp_path: Path,
) -> None:
    manifest = record(tmp_path)
    assert manifests.valid(manifest)
    assert [name for _, name, _ in manifest] == ["data.txt", "helper.py"]  # relative to the case's folder
    assert manifest[0] == [manifests.FILE, "data.txt", reuse.file_hash(str(tmp_path / "cases" / "data.txt"))]


# A cell's process reading weights through a native loader (``argv[2]``), which raises no ``open`` event.
NATIVE_LOADERS = """
import json, os, sys
import torch
from matrix.worker import reads
reads.allow()
folder, loader = sys.argv[1], sys.argv[2]
recording = reads.start()
if loader == "safetensors":
    from safetensors.torch import load_file, save_file
    weights = load_file(os.path.join(folder, "weights.bin"))
else:
    weights = torch.from_file(os.path.join(folder, "weights.bin"), size=4)
del weights  # nothing maps the file at the end: the wrapped loader saw it
print(json.dumps(recording.finish(os.path.join(folder, "case.py"))))
"""
SAVE_WEIGHTS = """
import sys, torch
if sys.argv[2] == "safetensors":
    from safetensors.torch import save_file
    save_file({"w": torch.ones(4)}, sys.argv[1])
else:
    torch.ones(4).numpy().tofile(sys.argv[1])
"""


@pytest.mark.parametrize("loader", ["from_file", "safetensors"])
def test_a_cell_process_records_the_weights_a_native_loader_read(tmp_path: Path, loader: str) -> None:
    if loader == "safetensors":  # torch.from_file is the same mechanism (a known loader wrapped), run everywhere
        pytest.importorskip("safetensors", reason="safetensors is not installed: its loader cannot be called")
    weights = tmp_path / "weights.bin"
    subprocess.run([sys.executable, "-c", SAVE_WEIGHTS, str(weights), loader], check=True)
    (tmp_path / "scratch").mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path / "scratch"))  # the run's own folder
    done = subprocess.run(
        [sys.executable, "-c", NATIVE_LOADERS, str(tmp_path), loader], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout.splitlines()[-1])
    assert [manifests.FILE, "weights.bin", reuse.file_hash(str(weights))] in manifest, manifest


# A cell's process reading variables each way; the manifest keeps what it read by name (argv[2]: the scratch).
VARIABLES = """
import json, os, sys
from matrix.worker import reads
reads.allow()
recording = reads.start()
os.environ["BY_INDEX"]
os.environ.get("BY_GET")
os.getenv("ABSENT", "default")
"BY_IN" in os.environ
os.environ["SET_FIRST"] = "mine"  # the cell's own value, not an input
os.environ["SET_FIRST"]
os.environ.get("TORCHDYNAMO_VERBOSE"), os.environ.get("TORCH_LOGS"), os.environ.get("EXPORT_MATRIX_X")
list(os.environ.items()), os.environ.copy()  # enumerating reads no name
print(json.dumps(recording.finish(os.path.join(sys.argv[1], "case.py"))))
"""


def test_a_cell_process_records_the_variables_it_read_by_name_and_no_other(tmp_path: Path) -> None:
    variables = {"BY_INDEX": "1", "BY_GET": "2", "BY_IN": "3", "UNREAD": "4", "TORCHDYNAMO_VERBOSE": "1"}
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path), **variables)
    env.pop("ABSENT", None)
    done = subprocess.run([sys.executable, "-c", VARIABLES, str(tmp_path)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout.splitlines()[-1])
    read = {name: digest for kind, name, digest in manifest if kind == manifests.VARIABLE}
    assert read == {
        "ABSENT": manifests.UNSET,
        "BY_GET": manifests.variable_hash("2"),
        "BY_IN": manifests.variable_hash("3"),
        "BY_INDEX": manifests.variable_hash("1"),
    }  # TORCHDYNAMO_*: in the key already; TORCH_LOGS: speed alone; EXPORT_MATRIX_*: the runner's


# A cell's process listing folders each way, and importing a module of its folder (which the import system lists).
LISTINGS = """
import glob, json, os, pathlib, sys
from matrix.worker import reads
folder = sys.argv[1]
sys.path.insert(0, folder)
reads.allow()
recording = reads.start()
import helper  # the import system lists the folder to find it: the module is kept, not that listing
glob.glob(os.path.join(folder, "shards", "*.bin"))
list(os.walk(os.path.join(folder, "tree")))
list(pathlib.Path(folder, "iterated").iterdir())
print(json.dumps(recording.finish(os.path.join(folder, "case.py"))))
"""


def test_a_cell_process_records_the_folders_it_listed_but_not_the_import_system_s(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    for name in ("shards/a.bin", "tree/sub/b.txt", "iterated/c.txt", "helper.py"):
        write(cases / name, "X = 1\n")
    (tmp_path / "scratch").mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path / "scratch"))  # the run's own folder
    done = subprocess.run([sys.executable, "-c", LISTINGS, str(cases)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout.splitlines()[-1])
    listed = [name for kind, name, _ in manifest if kind == manifests.LISTING]
    assert listed == ["iterated/", "shards/", "tree/", "tree/sub/"]
    assert [manifests.LISTING, "shards/", manifests.listing_hash(str(cases / "shards"))] in manifest
    assert [name for kind, name, _ in manifest if kind == manifests.FILE] == ["helper.py"]


def test_a_process_that_may_not_record_records_nothing(tmp_path: Path) -> None:
    assert record(tmp_path, allowed=False) is None


# A warm parent that imported one local module forks a cell; the cell imports another from its compiled file
# (``early``: one more before it starts recording, which the parent's list of modules then does not hold).
FORKED = """
import compileall, importlib, json, os, sys
from matrix.worker import reads
cases = sys.argv[1]
sys.path.insert(0, cases)
compileall.compile_dir(cases, quiet=1)
importlib.import_module("inherited")
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    reads.allow()
    if sys.argv[2] == "early":
        importlib.import_module("early")
    recording = reads.start()
    importlib.import_module("imported")
    full = reads.Recording().manifest(set(reads._opened), os.path.join(cases, "case.py"), ())
    listed = recording.finish(os.path.join(cases, "case.py"))
    os.write(write, json.dumps([recording.inherited is not None, listed, full]).encode())
    os._exit(0)
os.close(write)
os.waitpid(pid, 0)
print(os.read(read, 1 << 20).decode())
"""


def forked(tmp_path: Path, early: bool) -> List[object]:
    cases, scratch = tmp_path / "cases", tmp_path / "scratch"
    cases.mkdir()
    scratch.mkdir()
    for name in ("inherited", "imported", "early"):
        (cases / (name + ".py")).write_text("VALUE = 1\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(scratch))  # the run's own folder in a real run
    argv = [sys.executable, "-c", FORKED, str(cases), "early" if early else "no"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_a_forked_cell_lists_the_modules_it_inherited_and_imported_as_a_scan_of_every_module_would(
    tmp_path: Path,
) -> None:
    inherited, listed, full = forked(tmp_path, early=False)
    assert inherited  # the parent's list of its modules stood for what the cell held when it started
    assert [name for _, name, _ in listed] == ["imported.py", "inherited.py"]  # sources, not their .pyc
    assert listed == full


def test_a_cell_that_imported_a_module_before_recording_scans_every_module_instead(tmp_path: Path) -> None:
    inherited, listed, full = forked(tmp_path, early=True)
    assert not inherited
    assert [name for _, name, _ in listed] == ["early.py", "imported.py", "inherited.py"]
    assert listed == full


def test_an_edit_to_anything_a_cell_read_runs_it_again_and_nothing_else(tmp_path: Path) -> None:
    paths = layout(tmp_path)
    folder = paths["cases"]
    every = sorted(folder.glob("[a-z]_*.py"))
    first = run(tmp_path, "one", every)
    measured = cells(tmp_path / "one")
    assert {name: r["status"] for name, r in measured.items()} == {p.stem: "pass" for p in every}, first.stderr

    # One edit for each way a cell reaches a file; a sibling case and an unrelated file edited too.
    write(folder / "pkg" / "blocks.py", model(BROKEN))
    write(folder / "nested" / "inner" / "impl.py", model(BROKEN))
    write(folder / "helper_mod.py", model(BROKEN))
    write(paths["outside"] / "extpkg" / "model.py", model(BROKEN))
    write(folder / "scale.txt", "2\n")
    subprocess.run(
        [sys.executable, "-c", "import sys, torch; torch.save({'ok': False}, sys.argv[1])", str(paths["weights"])],
        check=True,
    )
    write(folder / "z_sibling.py", (folder / "z_sibling.py").read_text() + "# edited\n")
    write(folder / "unrelated.txt", "still nothing reads this\n")
    second = run(tmp_path, "two", every, "--explain-cache")
    again = cells(tmp_path / "two")
    edited = ["a_package", "b_nested", "c_importlib", "d_editable", "e_open", "f_torch_load"]
    for name in edited:
        assert again[name]["reused_from"] is None, (name, second.stderr)
        assert again[name]["status"] != "pass", (name, again[name])
    assert again["z_sibling"]["reused_from"] is None and again["z_sibling"]["status"] == "pass"
    for name in ("g_env", "y_plain"):  # nothing they read changed
        assert again[name]["reused_from"] == measured[name]["run_id"], second.stderr
    said = second.stderr
    for what in ("pkg/blocks.py changed", "nested/inner/impl.py changed", "helper_mod.py changed", "scale.txt changed"):
        assert what in said, said
    assert "weights.pt changed" in said and "extpkg/model.py changed" in said
    assert "the case's source changed" in said  # the sibling's own edit
    explained = [line for line in said.splitlines() if line.startswith("cache: ")]
    assert len(explained) == len(edited) + 1 and not any("g_env" in x or "y_plain" in x for x in explained), said

    shown = run_matrix("cache", "stats", "--cache", str(tmp_path / "cache")).stdout
    assert "hit rate: 11% (2 hits, 16 misses)" in shown and "entries: cell 10" in shown, shown

    # A variable that steers torch joins the key: the cell runs again and follows it.
    steered = run(tmp_path, "three", [folder / "g_env.py"], "--explain-cache", steer=True)
    third = cells(tmp_path / "three")
    assert third["g_env"]["reused_from"] is None and third["g_env"]["status"] != "pass"
    assert "%s set" % STEER in steered.stderr


def test_a_bad_entry_or_a_killed_cell_costs_the_reuse_and_nothing_else(tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    write(folder / "a_plain.py", case("", "torch.nn.Identity()"))
    write(folder / "b_plain.py", case("", "torch.nn.Identity()"))
    write(folder / "c_killed.py", case("import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGKILL)"))
    write(tmp_path / "outside" / "unused", "")
    every = sorted(folder.glob("*.py"))
    run(tmp_path, "one", every)
    measured = cells(tmp_path / "one")
    assert measured["c_killed"]["status"] == "crash"
    entries = sorted((tmp_path / "cache" / "cell").glob("*/*.json"))
    assert len(entries) == 2  # the killed cell left no entry (no manifest, no result)
    kept = {json.loads(p.read_text())["record"]["case"]: p for p in entries}
    # a_plain's manifest names a file that cannot be read; b_plain's entry is of an older format.
    entry = json.loads(kept["a_plain"].read_text())
    entry["extra"]["manifest"].append([manifests.FILE, str(tmp_path / "outside"), "0" * 64])
    kept["a_plain"].write_text(json.dumps(entry))
    entry = json.loads(kept["b_plain"].read_text())
    kept["b_plain"].write_text(json.dumps(dict(entry, format=1)))
    second = run(tmp_path, "two", every, "--explain-cache")
    again = cells(tmp_path / "two")
    assert sorted(again) == ["a_plain", "b_plain", "c_killed"]  # no record lost
    assert all(r["reused_from"] is None for r in again.values())
    assert again["a_plain"]["status"] == again["b_plain"]["status"] == "pass"
    assert second.stderr.count("warning:") <= 1, second.stderr
    assert "is gone or unreadable" in second.stderr
    # Without isolation nothing is recorded (earlier cells' imports would hide a later cell's reads): nothing kept.
    inline = tmp_path / "inline-cache"
    run(tmp_path, "inline", [folder / "a_plain.py"], "--isolation", "inline", "--cache", str(inline))
    assert cells(tmp_path / "inline")["a_plain"]["status"] == "pass"
    assert not list(inline.glob("cell/*/*.json"))


# Reading a file's first byte through the C library (ctypes): native code the audit hook does not see.
NATIVE_READ = """import ctypes
import os

libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fread.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
stream = libc.fopen(os.path.join(os.path.dirname(__file__), "native", "flag.bin").encode(), b"rb")
first = ctypes.create_string_buffer(1)
libc.fread(first, 1, 1, stream)
libc.fclose(stream)
OK = first.raw == b"1"
"""


def native_layout(folder: Path) -> None:
    """Cases that read their model's inputs natively, list a folder or read a variable of their own."""
    here = "import os\n\nHERE = os.path.dirname(__file__)\n"
    write(folder / "raw.bin", "")
    subprocess.run([sys.executable, "-c", SAVE_RAW, str(folder / "raw.bin"), "1"], check=True)
    write(folder / "h_from_file.py", case(
        here + "OK = torch.from_file(os.path.join(HERE, 'raw.bin'), size=1)[0].item() == 1",
        "torch.nn.Identity() if OK else None"))  # fmt: skip
    write(folder / "mapped.bin", "")
    subprocess.run([sys.executable, "-c", SAVE_RAW, str(folder / "mapped.bin"), "1"], check=True)
    write(folder / "i_memmap.py", case(
        here + "import numpy\n\nOK = float(numpy.memmap(os.path.join(HERE, 'mapped.bin'), dtype='float32')[0]) == 1",
        "torch.nn.Identity() if OK else None"))  # fmt: skip
    for name in ("a.bin", "b.bin"):
        write(folder / "shards" / name, name)
    write(folder / "j_listing.py", case(
        "import pathlib\n\nSHARDS = len(list((pathlib.Path(__file__).parent / 'shards').glob('*.bin')))",
        "torch.nn.Identity() if SHARDS == 2 else None"))  # fmt: skip
    write(
        folder / "k_variable.py",
        case("import os\n\nSCALE = os.environ.get('MY_SCALE', '1')", "torch.nn.Identity() if SCALE == '1' else None"),
    )
    write(folder / "native" / "flag.bin", "1")
    write(folder / "m_native.py", case(NATIVE_READ, "torch.nn.Identity() if OK else None"))
    declared = 'inputs = ["native/*.bin"]\n' + NATIVE_READ
    write(folder / "n_native_declared.py", case(declared, "torch.nn.Identity() if OK else None"))
    write(folder / "y_plain.py", case("", "torch.nn.Identity()"))
    write(folder / "unrelated.txt", "nothing reads this\n")


SAVE_RAW = "import sys, torch; torch.tensor([float(sys.argv[2])]).numpy().tofile(sys.argv[1])"


def test_what_native_code_read_a_listing_and_a_variable_of_the_case_run_it_again_and_nothing_else_does(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cases"
    native_layout(folder)
    every = sorted(folder.glob("[a-z]_*.py"))
    first = run(tmp_path, "one", every, variables={"GITHUB_RUN_ID": "1", "MY_SCALE": "1"})
    measured = cells(tmp_path / "one")
    assert {name: r["status"] for name, r in measured.items()} == {p.stem: "pass" for p in every}, first.stderr

    # Nothing the cells read changed: a variable none read and a file none read did. Every cell is reused but
    # the one that read a file through native code from outside the installed distributions without declaring it.
    write(folder / "unrelated.txt", "still nothing reads this\n")
    second = run(tmp_path, "two", every, "--explain-cache", variables={"GITHUB_RUN_ID": "2", "MY_SCALE": "1"})
    again = cells(tmp_path / "two")
    for name in again:
        assert (again[name]["reused_from"] is None) == (name == "m_native"), (name, second.stderr)
    assert "m_native runs again: a library loaded by name: native code from outside the installed" in second.stderr

    # One edit for each: each cell that read what was edited runs again and gives the uncached result.
    subprocess.run([sys.executable, "-c", SAVE_RAW, str(folder / "raw.bin"), "2"], check=True)
    subprocess.run([sys.executable, "-c", SAVE_RAW, str(folder / "mapped.bin"), "2"], check=True)
    (folder / "shards" / "b.bin").unlink()
    write(folder / "native" / "flag.bin", "0")
    third = run(tmp_path, "three", every, "--explain-cache", variables={"GITHUB_RUN_ID": "3", "MY_SCALE": "2"})
    last = cells(tmp_path / "three")
    edited = {"h_from_file": "raw.bin changed", "i_memmap": "mapped.bin changed",
              "j_listing": "shards/ listing changed", "k_variable": "MY_SCALE changed",
              "m_native": "a library loaded by name", "n_native_declared": "native/flag.bin changed"}  # fmt: skip
    for name, said in edited.items():
        assert last[name]["reused_from"] is None and last[name]["status"] != "pass", (name, last[name])
        assert "%s runs again: " % name in third.stderr and said in third.stderr, (said, third.stderr)
    assert last["y_plain"]["reused_from"] == measured["y_plain"]["run_id"]


CTYPES_IN_A_CELL = """
import os, sys, tempfile
import torch
from matrix.worker import reads
for name in [n for n in sys.modules if n == "ctypes" or n.startswith("ctypes.")]:
    del sys.modules[name]  # so that the cell imports ctypes first, as a release that had not imported it does
case = os.path.join(tempfile.mkdtemp(), "case.py")
open(case, "w").close()
reads.allow()

def native(run):
    recording = reads.start()
    run()
    return [entry[1] for entry in recording.finish(case) if entry[0] == "native"]

def as_torch(source):  # code in torch's folder: as torch.cuda opens libnvidia-ml.so.1 on a CUDA build
    exec(compile(source, os.path.join(os.path.dirname(torch.__file__), "cuda", "probe.py"), "exec"), {})

print(native(lambda: __import__("ctypes")))
print(native(lambda: as_torch("import ctypes; ctypes.CDLL('libm.so.6')")))
import ctypes
print(native(lambda: ctypes.CDLL("libm.so.6")))  # the case opens a library by name: it may read any file with it
print(native(lambda: ctypes.CDLL(None)))  # the case opens the program itself: the C library's fopen, say
"""


def test_libraries_opened_by_torch_or_ctypes_itself_are_the_builds_and_those_a_case_opens_are_unknown() -> None:
    """A CUDA build's torch opens libnvidia-ml.so.1 by name in every cell, and a release that had not imported
    ctypes before the cell imports it there (``PyDLL(None)``): each made every such cell's result one that is never
    reused, so `check` on PyPI's builds never answered from the result cache."""
    done = subprocess.run(
        [sys.executable, "-c", CTYPES_IN_A_CELL], capture_output=True, text=True, check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    unknown = "['a library loaded by name']"
    assert done.stdout.split("\n")[:4] == ["[]", "[]", unknown, unknown], done.stdout + done.stderr
