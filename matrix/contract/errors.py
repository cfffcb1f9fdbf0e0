"""The one user-facing error: an expected failure, printed as one line by the command line.

Standard library only, Python 3.8 syntax: the worker raises it too.
"""

from __future__ import annotations

import sys
from typing import Callable, Optional

# Exit statuses of every command.
FAILED = 1  # the command ran and its answer is "no" (e.g. bisect found nothing, a policy failed)
USAGE = 2  # bad input: an option, a file, a configuration
UNAVAILABLE = 3  # something the command needs could not be had (an environment, a release)
INTERRUPTED = 130


class UserError(Exception):
    """A failure the user can act on; the message names the file, case or option at fault."""

    exit_code = USAGE

    def __init__(self, message: str, exit_code: Optional[int] = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


def report_errors(prog: str, body: Callable[[], int]) -> int:
    """Run a command's body; an expected failure becomes one line on stderr and its exit status.

    The one place where errors meet the user: every command goes through it.
    """
    try:
        return int(body())
    except UserError as exc:
        print("%s: error: %s" % (prog, exc), file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a read-only, full or missing folder: name the path, not a traceback
        where = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p)
        print("%s: error: %s%s" % (prog, where + ": " if where else "", exc.strerror or exc), file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        print("\n%s: interrupted; every record written so far is kept, run again to resume" % prog, file=sys.stderr)
        return INTERRUPTED
