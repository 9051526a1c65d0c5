#!/usr/bin/env python3
"""WordCount's reducer (and combiner) for Hadoop Streaming.

Reads `word<TAB>count` lines sorted by word and writes one line per run of
equal words with their sum. Bytes throughout, as the mapper.
"""
import sys


def main():
    out = sys.stdout.buffer
    word, total = None, 0
    for line in sys.stdin.buffer:
        key, _, count = line.rstrip(b"\n").partition(b"\t")
        if key != word:
            if word is not None:
                out.write(b"%s\t%d\n" % (word, total))
            word, total = key, 0
        total += int(count or 0)
    if word is not None:
        out.write(b"%s\t%d\n" % (word, total))


if __name__ == "__main__":
    main()
