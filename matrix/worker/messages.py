"""How a job crosses into an isolated process, and how its result asks for a follow-up.

A job crosses as a message ``{"job": KIND, "fields": {...}}``: its kind (a key of
:data:`.jobs.KINDS`) and its dataclass fields; the isolated process rebuilds the job with the
kind's ``from_fields`` and calls its ``run()`` (:func:`.jobs.work`). A message may carry its own time
limit under ``TIME_LIMIT`` (seconds), where its job may take longer than the batch's ``--timeout`` (a compile,
which has a limit of its own inside). A result may ask for a
follow-up under ``FOLLOW_UP``: ``{"message": MESSAGE, "merge": NAME, ...}``, a second job that the
engine runs in a fresh process after the first ends, whose result the merge ``NAME`` (a key of
:data:`.jobs.MERGES`) folds into the first's; or a list of them, run and merged in order.

This module imports nothing of the worker, so that job kinds can use it: the registry
(:mod:`.jobs`) imports the kinds, and the engine (:mod:`.batch`) the registry.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict

Result = Dict[str, Any]
Message = Dict[str, Any]
# The key of a result under which it asks for a follow-up.
FOLLOW_UP = "follow_up"
# The key of a message that gives its job a time limit of its own, instead of the batch's.
TIME_LIMIT = "time_limit"


def message(job: Any) -> Message:
    """A job as it crosses into the isolated process: its kind (``KIND``) and its fields."""
    return {"job": job.KIND, "fields": dataclasses.asdict(job)}
