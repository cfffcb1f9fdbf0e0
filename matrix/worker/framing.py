"""Messages over pipes: a length header, then JSON, so a reader knows when one is whole.

The runner, its lanes and its cells talk through pipes. A length header lets the reader
take a result as soon as it is complete, without waiting for the writer to exit and close
its end (a cell's address space can take long to tear down, and a process the cell left
behind may hold the pipe open).

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any, List, Optional

HEADER = struct.Struct("!Q")


def write(fd: int, message: Any) -> None:
    """Write one message whole (a pipe may take it in several writes)."""
    data = json.dumps(message, default=str).encode("utf-8")
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def complete(data: bytearray) -> bool:
    """Whether ``data`` holds one whole message."""
    return len(data) >= HEADER.size and len(data) >= HEADER.size + HEADER.unpack_from(data)[0]


def decode(data: bytearray) -> Any:
    """The message in ``data`` (which ``complete`` accepted); ValueError when it is not JSON."""
    size = HEADER.unpack_from(data)[0]
    return json.loads(bytes(data[HEADER.size : HEADER.size + size]).decode("utf-8"))


def _read_exactly(fd: int, size: int) -> Optional[bytes]:
    chunks: List[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read(fd: int) -> Any:
    """The next message, blocking; None when the other side closed its end first."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    data = _read_exactly(fd, HEADER.unpack(header)[0])
    return None if data is None else json.loads(data.decode("utf-8"))
