"""The launcher's rules: a deadline, its own processes killed by PID, none
left behind, and every task's log in the failure."""
from __future__ import absolute_import, division, print_function

import os
import re

import pytest

from tests import multiprocess

pytestmark = pytest.mark.multiprocess


def test_a_hung_worker_is_killed_at_the_deadline_and_its_log_shown():
    with pytest.raises(AssertionError) as info:
        multiprocess.run_cluster("tests.workers.sleeper", lambda task_type, i: [str(i)],
                                 workers=2, deadline=5)
    text = str(info.value)
    assert "hung (killed at the 5s deadline): [('worker', 0)]" in text
    assert "still alive: []" in text
    pids = [int(p) for p in re.findall(r"task \d started, pid (\d+)", text)]
    assert len(pids) == 2, text  # both logs are in the message
    for pid in pids:
        with pytest.raises(OSError):
            os.kill(pid, 0)  # gone


def test_ports_are_free_and_on_loopback():
    ports = multiprocess.free_ports(3)
    assert len(set(ports)) == 3 and all(1024 < p < 65536 for p in ports)
