"""The fresh-load servers: one per lane, each job in a process of its own forked from a server that ran none,
the next job's processes forked ahead, a job past its limit ended alone, nothing left behind when stopped."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar, Dict, List

import pytest

from matrix.worker import jobs
from matrix.worker.messages import message
from matrix.worker.pristine import Client, Server

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the process tree")

# Set by each job in its own process: a job that found it set ran where another job had run.
_RAN_HERE: List[int] = []


@dataclasses.dataclass(frozen=True)
class Probe:
    """A job that says where it ran and whether any job ran in that process before it."""

    KIND: ClassVar[str] = "probe"

    sleep_s: float = 0.0

    @classmethod
    def from_fields(cls, fields: Dict[str, Any]) -> Probe:
        return cls(**fields)

    def run(self) -> Dict[str, Any]:
        before = list(_RAN_HERE)
        _RAN_HERE.append(os.getpid())
        time.sleep(self.sleep_s)
        keeper = os.getppid()
        server = int(Path("/proc/%d/stat" % keeper).read_text().rsplit(")", 1)[1].split()[1])
        return {"status": "pass", "pid": os.getpid(), "keeper": keeper, "server": server, "ran_here_before": before}


def _descendants(root: int) -> List[int]:
    """Every live (not zombie) process under ``root``, read from /proc."""
    parents: Dict[int, int] = {}
    states: Dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        states[int(entry.name)], parents[int(entry.name)] = fields[0], int(fields[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found += [child for child in children if states.get(child) != "Z"]
        frontier += children
    return found


@pytest.fixture
def probe_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(jobs.KINDS, Probe.KIND, Probe)  # the servers are forked from here, and inherit it


def test_each_lane_has_a_server_of_its_own_and_every_job_a_fresh_process(probe_kind: None) -> None:
    server = Server(None, count=2)
    try:
        assert len(server.addresses) == 2 and len(set(server.addresses)) == 2
        results: Dict[int, List[Dict[str, Any]]] = {0: [], 1: []}

        def lane(index: int) -> None:
            client = Client(server.addresses[index])
            for _ in range(4):
                results[index].append(client.run(message(Probe(sleep_s=0.05)), 30))

        threads = [threading.Thread(target=lane, args=(index,)) for index in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        every = results[0] + results[1]
        assert [r["status"] for r in every] == ["pass"] * 8, every
        assert all(r["ran_here_before"] == [] for r in every)  # no job ran where another had
        assert len({r["pid"] for r in every}) == 8 and len({r["keeper"] for r in every}) == 8
        assert os.getpid() not in {r["pid"] for r in every}
        # Two servers, each forking its own lane's processes: the first serves the first address, a sibling the other.
        assert {r["server"] for r in results[0]} == {server.pid}
        (sibling,) = {r["server"] for r in results[1]}
        assert sibling != server.pid and sibling in _descendants(server.pid)
    finally:
        server.stop()


def test_a_job_past_its_limit_is_ended_alone_and_the_next_job_runs(probe_kind: None) -> None:
    server = Server(None)
    try:
        client = Client(server.addresses[0])
        late = client.run(message(Probe(sleep_s=30)), 1.0)
        assert late["status"] == "timeout", late
        after = client.run(message(Probe()), 30)
        assert after["status"] == "pass" and after["ran_here_before"] == []
    finally:
        server.stop()


def test_stopping_the_servers_ends_every_process_they_forked_ahead(probe_kind: None) -> None:
    server = Server(None, count=2)
    assert server.pid is not None
    pid = server.pid
    for address in server.addresses:
        assert Client(address).run(message(Probe()), 30)["status"] == "pass"
    deadline = time.monotonic() + 10
    forked = _descendants(pid)
    # The second server and, per server, the keeper and process waiting for the next job.
    while len(forked) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
        forked = _descendants(pid)
    assert len(forked) >= 5, forked
    server.stop()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in forked) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in forked if _alive(p)]
    assert not Path(server.folder).exists()


def _alive(pid: int) -> bool:
    try:
        state = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
