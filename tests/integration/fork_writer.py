#!/usr/bin/python3
"""Fork patterns of real programs, writing into DIR (used by test_fork.sh).

usage: fork_writer.py DIR
- a captured fd shared across fork(): parent writes, child appends through the inherited
  descriptor (same file offset) and leaves with os._exit, parent writes again and closes;
- the forked child also creates its own file;
- subprocess (fork + exec) of `sh -c 'cat > FILE'`;
- a multiprocessing pool (fork start method) whose workers each write a file; pool
  workers end with os._exit, so atexit handlers never run in them.
Deterministic content, so a run without the library is the oracle.
"""
import multiprocessing as mp
import os
import subprocess
import sys


def worker(args):
    d, i = args
    with open(os.path.join(d, f"pool_{i}.txt"), "w") as f:
        for k in range(3000):
            f.write(f"worker {i} line {k}\n")
    return i


def main(d):
    fd = os.open(os.path.join(d, "shared.txt"), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, b"parent-1\n")
    pid = os.fork()
    if pid == 0:
        os.write(fd, b"child-part\n")
        os.close(fd)
        with open(os.path.join(d, "child_own.txt"), "w") as f:
            f.write("written by the forked child\n" * 100)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit(f"forked child failed: status {status}")
    os.write(fd, b"parent-2\n")
    os.close(fd)

    subprocess.run(["sh", "-c", f"cat > '{d}/via_exec.txt'"], input=b"through exec\n" * 500, check=True)

    ctx = mp.get_context("fork")
    with ctx.Pool(3) as pool:
        done = sorted(pool.map(worker, [(d, i) for i in range(6)]))
    if done != list(range(6)):
        sys.exit(f"pool returned {done}")
    print("fork_writer: ok")


if __name__ == "__main__":
    main(sys.argv[1])
