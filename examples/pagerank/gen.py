#!/usr/bin/env python3
"""Prints a random graph as example-pagerank's input, every rank 1/N.

    gen.py NODES EDGES_PER_NODE SEED > graph.txt

Nodes are 0..NODES-1; each links to EDGES_PER_NODE distinct other nodes
(fewer when the graph is too small), chosen by a generator seeded with
SEED, so that a run is repeatable. EDGES_PER_NODE 0 makes every node
dangling.
"""
import random
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gen.py NODES EDGES_PER_NODE SEED")
    try:
        nodes, edges, seed = (int(a) for a in sys.argv[1:])
    except ValueError:
        sys.exit("gen.py: NODES, EDGES_PER_NODE and SEED are integers")
    if nodes < 1 or edges < 0:
        sys.exit("gen.py: NODES must be at least 1 and EDGES_PER_NODE at least 0")
    rng = random.Random(seed)
    k = min(edges, nodes - 1)
    rank = repr(1.0 / nodes)
    out = sys.stdout
    for n in range(nodes):
        # Drawn from the other nodes: 0..n-1, then n+1.. shifted down by one.
        links = [m + (m >= n) for m in rng.sample(range(nodes - 1), k)]
        out.write("%d\t%s\t%s\n" % (n, rank, ",".join(str(m) for m in sorted(links))))


if __name__ == "__main__":
    main()
