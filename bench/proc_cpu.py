"""CPU-seconds from /proc, for the renderer benchmarks: one reader of a process tree.

A closed page's renderer process exits and is reaped by Chromium's zygote: its time then lives
only in the zygote's cutime+cstime (fields 16, 17 of /proc/PID/stat), so summing utime+stime
of live processes alone would lose most of each render's CPU. Every count here adds them.
"""

from __future__ import annotations

import os
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def stat_fields(path: str) -> list[str] | None:
    """A /proc .../stat line's fields after the command name (state first), or None if gone."""
    try:
        return Path(path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def descendants(root: int) -> list[int]:
    """Every live process under `root` (not `root` itself)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := stat_fields(f"/proc/{entry}/stat")):
            parents[int(entry)] = int(fields[1])
    out = []
    for pid in parents:
        p = pid
        while p and p != root:
            p = parents.get(p, 0)
        if p == root and pid != root:
            out.append(pid)
    return out


def process_cpu_seconds(pid: int, reaped: bool = True) -> float:
    """utime+stime of `pid`, plus (with `reaped`) those of its children it has reaped."""
    fields = stat_fields(f"/proc/{pid}/stat")
    if not fields:
        return 0.0
    return sum(int(f) for f in fields[11 : 15 if reaped else 13]) / TICK


def tree_cpu_seconds(root: int) -> float:
    """CPU of `root` and its descendants, the exited ones included. The root's reaped
    children (earlier browsers) are left out: they belong to earlier measurements."""
    return process_cpu_seconds(root, reaped=False) + sum(
        process_cpu_seconds(pid) for pid in descendants(root)
    )


def _machine_fields() -> list[int]:
    return [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]


def machine_stolen_seconds() -> float:
    """CPU-seconds the hypervisor gave to other guests (steal): a noisy neighbour's share,
    which slows every figure here without showing in any process's time."""
    return _machine_fields()[7] / TICK


def machine_busy_seconds() -> float:
    """CPU-seconds the whole machine has been busy (all cores, /proc/stat): a cross-check
    of the process-tree figure that only holds when nothing else runs."""
    fields = _machine_fields()
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:7]) - idle) / TICK  # steal (field 7) is not this machine's work
