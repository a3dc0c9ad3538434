"""wait_for: the one bounded wait of the test kit."""
import time


def wait_for(predicate, timeout=20.0, interval=0.05, what="condition", ignore=()):
    """Calls predicate() every `interval` seconds until it returns a truthy value
    and returns that value; raises AssertionError after `timeout` seconds.
    Exceptions of the types in `ignore` count as "not yet"."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = predicate()
        except ignore as e:  # noqa: B030 (a tuple of exception types)
            last = e
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")
        time.sleep(interval)
