"""Start test processes on 127.0.0.1 and always clean up after them.

``run_cluster(module, args_for, tasks, deadline)`` starts one process per
task (``python -m module *args_for(task, index)``) with its ``TF_CONFIG``,
each in a process group of its own; waits until all exit or the deadline
passes; kills what is left by PID (its own group, nothing else); and
raises with every task's log when one failed or hung. Ports are free ports
the OS handed out on 127.0.0.1 a moment before.
"""
from __future__ import absolute_import, division, print_function

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from gradacc_compat.distributed.cluster import tf_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_ports(count):
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def saved_weights(result):
    """The arrays a task saved positionally (``np.savez(out, *weights)``)."""
    count = len([k for k in result.files if k.startswith("arr_")])
    return [result["arr_%d" % i] for i in range(count)]


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def run_cluster(module, args_for, workers=2, ps=0, deadline=240, env=None, signals_ok=False):
    """Runs the tasks; returns their logs ``{(type, index): text}``.
    ``signals_ok``: a worker killed by a signal (TF 1.14 has crashed with
    SIGSEGV while aborting a collective) is left for the caller to judge."""
    ports = free_ports(workers + ps)
    hosts = ["127.0.0.1:%d" % p for p in ports]
    worker_hosts, ps_hosts = hosts[:workers], hosts[workers:]
    tasks = [("worker", i) for i in range(workers)] + [("ps", i) for i in range(ps)]
    procs, logs = [], {}
    try:
        for task_type, index in tasks:
            task_env = dict(os.environ, **(env or {}))
            task_env["TF_CONFIG"] = tf_config(worker_hosts, index, task_type, ps_hosts)
            task_env.setdefault("PYTHONUNBUFFERED", "1")  # a killed task keeps its log
            task_env["PYTHONPATH"] = os.pathsep.join(
                [ROOT] + [p for p in [task_env.get("PYTHONPATH")] if p])
            log = tempfile.TemporaryFile()
            proc = subprocess.Popen([sys.executable, "-m", module] + list(args_for(task_type, index)),
                                    cwd=ROOT, env=task_env, stdout=log, stderr=subprocess.STDOUT,
                                    preexec_fn=os.setsid)
            procs.append((task_type, index, proc, log))
        end = time.time() + deadline
        workers_done = lambda: all(p.poll() is not None for t, _, p, _ in procs if t == "worker")
        while time.time() < end and not workers_done():
            time.sleep(0.2)
        hung = [(t, i) for t, i, p, _ in procs if t == "worker" and p.poll() is None]
    finally:
        for _, _, proc, _ in procs:  # ps tasks serve forever; hung workers too
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for task_type, index, proc, log in procs:
        log.seek(0)
        logs[(task_type, index)] = log.read().decode("utf-8", "replace")
        log.close()
    left = [p.pid for _, _, p, _ in procs if _alive(p.pid)]
    failed = [(t, i, p.returncode) for t, i, p, _ in procs
              if t == "worker" and p.returncode != 0 and not (signals_ok and p.returncode < 0)]
    if hung or failed or left:
        raise AssertionError(
            "multi-process run failed: hung (killed at the %ds deadline): %s; failed: %s; "
            "still alive: %s\n%s" % (deadline, hung, failed, left, "\n".join(
                "----- %s %d -----\n%s" % (t, i, logs[(t, i)][-4000:]) for t, i in sorted(logs))))
    return logs


def run_command(argv, deadline=300, env=None, expect_exit=0):
    """Runs a launcher (``horovodrun`` ...) in a process group of its own;
    kills that group at the deadline; raises with its output when it hung
    or exited with another status than ``expect_exit``."""
    log = tempfile.TemporaryFile()
    task_env = dict(os.environ, **(env or {}))
    task_env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [task_env.get("PYTHONPATH")] if p])
    proc = subprocess.Popen(argv, cwd=ROOT, env=task_env, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=os.setsid)
    end = time.time() + deadline
    while time.time() < end and proc.poll() is None:
        time.sleep(0.2)
    hung = proc.poll() is None
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and every rank it started
    except OSError:
        pass  # the group is gone already
    proc.wait()
    log.seek(0)
    text = log.read().decode("utf-8", "replace")
    log.close()
    if hung or proc.returncode != expect_exit:
        raise AssertionError("%s %s (exit %s):\n%s" % (
            argv[0], "hung past the %ds deadline" % deadline if hung else "failed",
            proc.returncode, text[-6000:]))
    return text
