#!/usr/bin/env python3
"""WordCount's mapper for Hadoop Streaming: `word<TAB>count` per word.

Words are the built-in WordCount's: maximal runs of bytes other than the
six C-locale whitespace bytes. Bytes, not str, so that any encoding counts
as the built-in counts it (str.split() would also split on Unicode spaces).
Counts are combined in memory (bounded) before they are written, so the
pipe and the sort carry one line per distinct word rather than per word.
"""
import re
import sys

SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]+")
MAX_HELD = 1 << 18


def flush(counts, out):
    for word, n in counts.items():
        out.write(b"%s\t%d\n" % (word, n))
    counts.clear()


def main():
    counts = {}
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        for word in SPACE.split(line):
            if word:
                counts[word] = counts.get(word, 0) + 1
        if len(counts) > MAX_HELD:
            flush(counts, out)
    flush(counts, out)


if __name__ == "__main__":
    main()
