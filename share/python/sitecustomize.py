# ezpz puts this directory first on its ranks' PYTHONPATH so that `ezpz stacks`, SIGQUIT to
# ezpz and --idle-timeout can read every thread's Python stack without stopping the rank
# (README: Stacks of hung ranks). faulthandler writes them, from its C signal handler, to a
# deleted file this process keeps open; ezpz reads it through /proc/PID/fd. Then the
# sitecustomize this one shadows, if any, is imported as if this one were not there.
import os
import sys


def _ezpz_stacks_hook():
    import faulthandler

    # Neither tempfile nor signal: importing them (shutil, random; enum, functools) would cost
    # every Python process milliseconds of start-up. SIGQUIT is 3 on every Linux.
    sigquit = 3
    directory = os.environ.get("TMPDIR") or "/tmp"
    path = os.path.join(directory, "ezpz-stacks-%d-%d" % (os.getpid(), id(directory)))
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        os.unlink(path)
        faulthandler.register(sigquit, file=fd, all_threads=True)
    except (OSError, RuntimeError, ValueError):
        pass  # no stacks for this process; it runs as it would without ezpz


def _ezpz_chain():
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    # Out of sys.modules while the shadowed one is looked for, and back if there is none: the
    # import that runs this file reads its name there when this file ends (a Python with no
    # sitecustomize of its own, as pyenv's and venvs made from it, printed "Error in
    # sitecustomize ... KeyError: 'sitecustomize'" on every rank).
    this = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401  the one this file shadows
    except ModuleNotFoundError as e:
        if e.name != "sitecustomize":
            raise
    finally:
        sys.path[:] = saved
        if this is not None:
            sys.modules.setdefault("sitecustomize", this)


if os.environ.get("EZPZ_RUN_ID"):
    _ezpz_stacks_hook()
_ezpz_chain()
