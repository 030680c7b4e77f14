"""Which server sessions belong to a process the test started: its TCP client ports, read
from /proc, match ``pg_stat_activity.client_port`` (and MariaDB's PROCESSLIST host:port), so a
test ends only its own child's sessions and never another test's on a shared server."""

from __future__ import annotations

import os


def client_ports(pid: int) -> set[int]:
    """The local ports of the TCP connections process ``pid`` has open (Linux)."""
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table, encoding="ascii") as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports
