"""The CI side of the matrix: the job plan from nox's session list, and the run's summary.

``python -m matrix.commands.ci plan`` turns ``nox -l --json`` into a GitHub Actions job matrix,
filtered by the workflow's inputs. ``python -m matrix.commands.ci summary REPORT_DIR`` writes the
run's Markdown summary and decides whether the run has new regressions since the
published baseline (:mod:`matrix.commands.ci_summary`). Both are plain functions so the workflow stays a thin shell.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from matrix.commands.ci_summary import SummaryOptions, configure_summary, run_summary
from matrix.contract.errors import UserError, report_errors
from matrix.contract.options import from_namespace

SESSION = "run"  # the nox session parametrized over (torch, variant)
SELECTION_VARIABLE = "EXPORT_MATRIX_TORCH"  # the noxfile's choice of releases to list
ALL = "all"
CUDA_VARIANT = re.compile(r"cu\d+$")
ARTIFACT_UNSAFE = re.compile(r'[":<>|*?\\/\r\n]+')

# One label, or several that a runner must all carry (``self-hosted, gpu``).
Runner = Union[str, Tuple[str, ...]]


class PlanError(UserError):
    """Unusable session list or a filter that selects nothing; the message says which."""


@dataclass(frozen=True)
class Session:
    """One nox ``run`` session: a (torch release, wheel variant) environment."""

    name: str
    torch: str
    variant: str
    tags: Tuple[str, ...] = ()

    @property
    def gpu(self) -> bool:
        return "cuda" in self.tags or bool(CUDA_VARIANT.match(self.variant))


@dataclass(frozen=True)
class Job:
    """One entry of the job matrix."""

    session: str
    torch: str
    variant: str
    gpu: bool
    runner: Runner
    artifact: str

    def to_json(self) -> Dict[str, Any]:
        return dict(asdict(self), runner=self.runner if isinstance(self.runner, str) else list(self.runner))


def parse_sessions(text: str, source: str = "nox -l --json") -> List[Session]:
    """The ``run`` sessions in nox's JSON session list."""
    try:
        listed = json.loads(text)
    except ValueError as exc:
        raise PlanError("%s: not JSON (%s); expected the output of `nox -l --json`" % (source, exc))
    if not isinstance(listed, list):
        raise PlanError("%s: expected a JSON list of sessions, got %s" % (source, type(listed).__name__))
    sessions = []
    for entry in listed:
        if not isinstance(entry, dict) or entry.get("name") != SESSION:
            continue
        spec = entry.get("call_spec") or {}
        if "torch" not in spec or "variant" not in spec:
            raise PlanError("%s: session %r has no torch/variant parameters" % (source, entry.get("session")))
        tags = tuple(str(tag) for tag in entry.get("tags") or ())
        sessions.append(Session(str(entry["session"]), str(spec["torch"]), str(spec["variant"]), tags))
    if not sessions:
        raise PlanError("%s: lists no %r session; is this the project's noxfile?" % (source, SESSION))
    return sessions


def tokens(text: Optional[str]) -> List[str]:
    """Filter words from a workflow input: separated by commas or whitespace; empty means all."""
    return [token for token in re.split(r"[,\s]+", text or "") if token]


def _matches(token: str, value: str, tags: Sequence[str]) -> bool:
    # A release filter may name a nox tag ("latest"), a version ("2.4.1"), a glob ("2.4.*")
    # or a minor series ("2.4"); a variant filter a tag ("cuda") or a variant glob ("cu12*").
    return (
        token == ALL or token in tags or fnmatch.fnmatchcase(value, token) or fnmatch.fnmatchcase(value, token + ".*")
    )


def select(sessions: Sequence[Session], releases: Sequence[str], variants: Sequence[str]) -> List[Session]:
    """The sessions chosen by release and variant filters; a filter word that matches nothing is an error."""
    for words, field, what in ((releases, "torch", "release"), (variants, "variant", "variant")):
        for word in words:
            if not any(_matches(word, getattr(s, field), s.tags) for s in sessions):
                known = sorted({getattr(s, field) for s in sessions} | {t for s in sessions for t in s.tags})
                raise PlanError("%s filter %r matches no session; known: %s" % (what, word, ", ".join(known)))
    return [
        s
        for s in sessions
        if (not releases or any(_matches(w, s.torch, s.tags) for w in releases))
        and (not variants or any(_matches(w, s.variant, s.tags) for w in variants))
    ]


def runner_label(label: str) -> Runner:
    """A runner label, or a list of labels when given comma-separated (``self-hosted,gpu``)."""
    parts = tokens(label)
    return parts[0] if len(parts) == 1 else tuple(parts)


def artifact_name(session: Session) -> str:
    return ARTIFACT_UNSAFE.sub("_", "records-torch-%s-%s" % (session.torch, session.variant))


def plan(sessions: Sequence[Session], cpu_runner: str, gpu_runner: str) -> Tuple[List[Job], List[Session]]:
    """Jobs for the chosen sessions, and the CUDA sessions left out because no GPU runner is configured."""
    jobs: List[Job] = []
    skipped: List[Session] = []
    for session in sorted(sessions, key=lambda s: s.name):
        if session.gpu and not gpu_runner.strip():
            skipped.append(session)
            continue
        label = gpu_runner if session.gpu else cpu_runner
        runner = runner_label(label)
        jobs.append(Job(session.name, session.torch, session.variant, session.gpu, runner, artifact_name(session)))
    return jobs, skipped


def list_sessions(noxfile: str) -> str:
    """Ask nox for its session list (``run`` is not a default session, so name it).

    The project's noxfile lists only a quick selection of releases unless
    ``EXPORT_MATRIX_TORCH`` says otherwise; the plan filters the full list itself.
    """
    command = [sys.executable, "-m", "nox", "--noxfile", noxfile, "-l", "--json", "-s", SESSION]
    env = dict(os.environ)
    env.setdefault(SELECTION_VARIABLE, ALL)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise PlanError("`%s` failed (exit %d): %s" % (" ".join(command), done.returncode, done.stderr.strip()))
    return done.stdout


def _configure_plan(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sessions", metavar="FILE", help="saved `nox -l --json` output ('-': stdin); default: run nox"
    )
    parser.add_argument("--noxfile", default="noxfile.py", help="noxfile to list when --sessions is not given")
    parser.add_argument(
        "--releases", default=ALL, help="tags, versions or globs: 'latest', '2.4.1 2.5.*' (default all)"
    )
    parser.add_argument("--variants", default=ALL, help="tags or variant globs: 'cpu', 'pypi,cu124' (default all)")
    parser.add_argument("--cpu-runner", default="ubuntu-latest", help="runner label for CPU variants")
    parser.add_argument("--gpu-runner", default="", help="runner label(s) for CUDA variants; empty: skip them")
    parser.add_argument("--github-output", metavar="PATH", help="also append matrix= and count= to this file")


@dataclass(frozen=True)
class PlanOptions:
    """The options of ``python -m matrix.commands.ci plan``."""

    sessions: Optional[str] = None
    noxfile: str = "noxfile.py"
    releases: str = ALL
    variants: str = ALL
    cpu_runner: str = "ubuntu-latest"
    gpu_runner: str = ""
    github_output: Optional[str] = None


def run_plan(args: PlanOptions) -> int:
    if args.sessions == "-":
        text, source = sys.stdin.read(), "stdin"
    elif args.sessions:
        with open(args.sessions, encoding="utf-8") as f:
            text, source = f.read(), args.sessions
    else:
        text, source = list_sessions(args.noxfile), "nox -l --json"
    chosen = select(parse_sessions(text, source), tokens(args.releases), tokens(args.variants))
    jobs, skipped = plan(chosen, args.cpu_runner, args.gpu_runner)
    for session in skipped:
        print(
            "matrix.commands.ci plan: note: %s needs a GPU runner; none configured, skipped" % session.name,
            file=sys.stderr,
        )
    matrix = json.dumps({"include": [job.to_json() for job in jobs]}, sort_keys=True)
    print(matrix)
    if args.github_output:
        with open(args.github_output, "a", encoding="utf-8") as f:
            f.write("matrix=%s\ncount=%d\n" % (matrix, len(jobs)))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m matrix.commands.ci", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _configure_plan(commands.add_parser("plan", help="print the job matrix for the chosen releases and variants"))
    configure_summary(commands.add_parser("summary", help="write the run's Markdown summary; judge new regressions"))
    args = parser.parse_args(argv)
    prog = "matrix.commands.ci " + args.command
    if args.command == "plan":
        return report_errors(prog, lambda: run_plan(from_namespace(PlanOptions, args)))
    return report_errors(prog, lambda: run_summary(from_namespace(SummaryOptions, args)))


if __name__ == "__main__":
    sys.exit(main())
