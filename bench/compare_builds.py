#!/usr/bin/env python3
"""Two ezpz builds side by side, alternating run by run, on the launch path's cases.

    bench/compare_builds.py OLD_DIR NEW_DIR [ROUNDS]

OLD_DIR and NEW_DIR each hold an `ezpz` and an `ezpz-rankenv` (Release builds of two
commits, e.g. `build-bench/` of two worktrees). Each round runs every case once with each
build, the side that goes first drawn at random, so load and drift hit both alike; the table
gives both medians and the median and mean of the per-round differences (NEW - OLD). Separate
invocations of bench/launch_overhead drift by more than the changes worth measuring; this
loop is the comparison to trust between two commits.

Each side runs from a fresh copy in the scratch directory (`ezpz`, `ezpz-rankenv` and
`python/`, where there is one), copied alike just before timing: the same binary runs a dry
run about 0.2 ms apart as the linker wrote it and as a fresh copy (the page cache's state of
the file; bench/README.md, twentieth session), so two sides written differently would differ
by that alone.

Every run: a clean environment (PATH with MPICH's Hydra pinned as `mpiexec`, since Debian's
`mpiexec` is Open MPI's once openmpi-bin is installed), HOME and a runs directory per build
(pre-filled past EZPZ_RUNS_KEEP, as a user's is), MASTER_PORT set, stdout/stderr /dev/null.
"""
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

PREFILL = 60  # records in each build's runs directory before timing: past the default 50


def hydra():
    for path in ("/usr/bin/mpiexec.mpich", "/usr/bin/mpiexec.hydra"):
        if os.path.exists(path):
            return path
    sys.exit("compare_builds.py: no MPICH mpiexec (apt-get install mpich)")


def make_scratch():
    scratch = tempfile.mkdtemp(prefix="ezpz-compare-")
    pinned = os.path.join(scratch, "hydra")
    noop = os.path.join(scratch, "noop")
    os.makedirs(pinned)
    os.makedirs(noop)
    os.symlink(hydra(), os.path.join(pinned, "mpiexec"))
    os.symlink("/usr/bin/hydra_pmi_proxy", os.path.join(pinned, "hydra_pmi_proxy"))
    os.symlink("/bin/true", os.path.join(noop, "mpiexec"))
    with open(os.path.join(scratch, "nodefile"), "w") as f:
        f.write("x3006c0s13b0n0\nx3006c0s19b0n0\n")
    return scratch


def cases(scratch):
    noop = {"PATH": os.path.join(scratch, "noop") + ":/usr/bin:/bin"}
    polaris = {"PBS_JOBID": "1.x", "PBS_NODEFILE": os.path.join(scratch, "nodefile"),
               "EZPZ_MACHINE": "polaris"}
    rank = {"EZPZ_LAUNCHER": "hydra", "PMI_RANK": "1", "MPI_LOCALRANKID": "1",
            "EZPZ_GPU_MASKS": "3;2;1;0", "EZPZ_GPU_VARIABLES": "CUDA_VISIBLE_DEVICES"}
    launch = ["launch", "-n", "2", "--", "/bin/true"]
    return [
        ("ezpz launch -n 2 -- /bin/true", "ezpz", launch, {}),
        ("  same, mpiexec = /bin/true", "ezpz", launch, noop),
        ("  same, --output raw", "ezpz", ["launch", "--output", "raw"] + launch[1:], {}),
        ("ezpz launch --dry-run -n 2", "ezpz", ["launch", "--dry-run"] + launch[1:], {}),
        ("--dry-run, Polaris 2 x 4", "ezpz", ["launch", "--dry-run", "--", "python3", "t.py"],
         polaris),
        ("ezpz --version", "ezpz", ["--version"], {}),
        ("ezpz-rankenv /bin/true (masks)", "ezpz-rankenv", ["/bin/true"], rank),
    ]


def fresh_copy(directory, scratch, side):
    """The side's programs copied into the scratch directory; returns where."""
    copy = os.path.join(scratch, "bin-" + side)
    os.makedirs(copy)
    for program in ("ezpz", "ezpz-rankenv"):
        shutil.copy2(os.path.join(directory, program), copy)
    if os.path.isdir(os.path.join(directory, "python")):
        shutil.copytree(os.path.join(directory, "python"), os.path.join(copy, "python"))
    return copy


def environment(scratch, side, extra):
    env = {"PATH": os.path.join(scratch, "hydra") + ":/usr/bin:/bin",
           "HOME": os.path.join(scratch, "home-" + side),
           "EZPZ_RUN_DIR": os.path.join(scratch, "run-" + side),
           "EZPZ_RUNS_DIR": os.path.join(scratch, "runs-" + side),
           "MASTER_PORT": "29500"}
    env.update(extra)
    return env


def run(argv, env):
    null = [(os.POSIX_SPAWN_OPEN, fd, "/dev/null", os.O_WRONLY, 0) for fd in (1, 2)]
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=null)
    _, status = os.waitpid(pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    if status != 0:
        sys.exit(f"compare_builds.py: {' '.join(argv)} failed (wait status {status})")
    return elapsed


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.splitlines()[2].strip())
    named = {"old": sys.argv[1], "new": sys.argv[2]}
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    scratch = make_scratch()
    builds = {side: fresh_copy(directory, scratch, side) for side, directory in named.items()}
    table = cases(scratch)
    for side, directory in builds.items():
        for _ in range(PREFILL):
            run([directory + "/ezpz"] + table[1][2], environment(scratch, side, table[1][3]))
    times = {(name, side): [] for name, *_ in table for side in builds}
    rng = random.Random(0)
    for r in range(rounds + 5):  # 5 untimed rounds first
        # Which side goes first is drawn each round, not flipped: a launch prunes every sixth
        # recording launch of its side, every second round here, and a strict flip put each
        # side's pruning launch always first or always second (identical builds read 1 ms
        # apart on the no-op row).
        order = rng.sample(list(builds.items()), 2)
        for name, program, args, extra in table:
            for side, directory in order:
                t = run([os.path.join(directory, program)] + args,
                        environment(scratch, side, extra))
                if r >= 5:
                    times[(name, side)].append(t)
    print(f"{rounds} alternated rounds; old = {named['old']}, new = {named['new']}; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'case':34s} {'old ms':>8s} {'new ms':>8s} {'new-old median':>15s} {'mean':>8s}")
    for name, *_ in table:
        old, new = times[(name, "old")], times[(name, "new")]
        diffs = [b - a for a, b in zip(old, new)]
        print(f"{name:34s} {statistics.median(old):8.3f} {statistics.median(new):8.3f} "
              f"{statistics.median(diffs):+15.3f} {statistics.mean(diffs):+8.3f}")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
