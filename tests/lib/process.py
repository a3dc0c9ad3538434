"""Stopping the processes a test started: by PID, with a bound."""
import os
import signal
import subprocess


def stop_process(proc, timeout=15.0, sig=signal.SIGTERM):
    """Sends `sig` to proc (a Popen we started), waits up to `timeout` seconds,
    then SIGKILLs it. Returns the exit status (None if proc is None)."""
    if proc is None:
        return None
    if proc.poll() is not None:
        return proc.returncode
    os.kill(proc.pid, sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        return proc.wait(10)
