#!/usr/bin/env python3
"""Prints numbered lines as a rank of a real job does, for the rank-aware output tests and
bench/output_lines: `output_lines.py LINES` under a launcher (rank from RANK, PMI_RANK,
OMPI_COMM_WORLD_RANK or SLURM_PROCID). Each line is "rank R seq S " and a padding; every third
line goes out in two write()s, its text and then its newline, as print() does under
PYTHONUNBUFFERED=1; every 97th is longer than a pipe's atomic write (PIPE_BUF, 4096).
`output_lines.py LINES --expect R` prints what rank R writes, to compare with.
`output_lines.py --check PATTERN FILE`: counts the lines of FILE that are not one rank's whole
line, after a launcher's tag (PATTERN: a regular expression whose group 1 is the rank) or, with
PATTERN "-", untagged; prints "lines N bad M out_of_order K".
`output_lines.py --check-demux PATTERN FILE`: the same after splitting FILE at every tag (a
launcher that tags each piece it forwards, even mid-line) and joining each rank's pieces."""
import os
import re
import sys


def line(rank, seq):
    size = 5000 + seq % 4000 if seq % 97 == 0 else 40 + (seq * 37) % 160
    head = "rank %d seq %d " % (rank, seq)
    return head + "x" * max(0, size - len(head))


def rank_of_environment():
    for name in ("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"):
        if name in os.environ:
            return int(os.environ[name])
    return 0


def write(lines):
    rank = rank_of_environment()
    for seq in range(lines):
        text = line(rank, seq).encode()
        if seq % 3 == 1:
            os.write(1, text)
            os.write(1, b"\n")
        else:
            os.write(1, text + b"\n")


def demux(pattern, path):
    """Each rank's bytes: what follows each of its tags, up to the next tag."""
    with open(path, "rb") as f:
        data = f.read()
    streams, rank, start = {}, None, 0
    for m in re.finditer(pattern.encode(), data):
        streams.setdefault(rank, []).append(data[start:m.start()])
        rank, start = int(m.group(1)), m.end()
    streams.setdefault(rank, []).append(data[start:])
    return b"".join(b"".join(pieces) for pieces in streams.values()).splitlines(True)


def check(pattern, path, split=False):
    tag = re.compile(pattern) if pattern != "-" and not split else None
    body = re.compile(r"rank (\d+) seq (\d+) (x*)$")
    lines = bad = out_of_order = 0
    next_seq = {}
    with open(path, "rb") as f:
        for raw in (demux(pattern, path) if split else f):
            lines += 1
            text = raw.decode(errors="replace").rstrip("\n")
            tagged_rank = None
            if tag is not None:
                m = tag.match(text)
                if not m:
                    bad += 1
                    continue
                tagged_rank, text = int(m.group(1)), text[m.end():]
            m = body.match(text)
            if not m or text != line(int(m.group(1)), int(m.group(2))) or (
                    tagged_rank is not None and tagged_rank != int(m.group(1))):
                bad += 1
                continue
            rank, seq = int(m.group(1)), int(m.group(2))
            if next_seq.get(rank, 0) != seq:
                out_of_order += 1
            next_seq[rank] = seq + 1
    print("lines %d bad %d out_of_order %d" % (lines, bad, out_of_order))


if __name__ == "__main__":
    if sys.argv[1] in ("--check", "--check-demux"):
        check(sys.argv[2], sys.argv[3], split=sys.argv[1] == "--check-demux")
    elif len(sys.argv) == 4 and sys.argv[2] == "--expect":
        rank = int(sys.argv[3])
        sys.stdout.write("".join(line(rank, s) + "\n" for s in range(int(sys.argv[1]))))
    else:
        write(int(sys.argv[1]))
