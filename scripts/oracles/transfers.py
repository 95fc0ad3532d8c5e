"""The routing guarantee computed with networkx, independently of Kiln's SQL: reads Routes_UTF8.txt (line header,
then `0 CODE! 1 CODE! …`), builds the bipartite graph of stops and lines, and prints as JSON every unordered stop pair
that needs more than two changes, with the number of changes (a path stop-line-stop-…-stop of length 2(k+1) is k
changes), or null when the stops are not connected."""
import itertools
import json
import sys

import networkx

text = open(sys.argv[1], encoding="utf-8").read().split("\n")
graph = networkx.Graph()
for header, items in zip(text[0::2], text[1::2]):
    if not header.strip():
        continue
    line = "line:" + header.split()[0]
    for item in items.split("!"):
        parts = item.split()
        if len(parts) == 2:
            graph.add_edge(line, parts[1])
stops = sorted(node for node in graph if not node.startswith("line:"))
lengths = dict(networkx.all_pairs_shortest_path_length(graph))
pairs = []
for a, b in itertools.combinations(stops, 2):
    length = lengths[a].get(b)
    changes = None if length is None else length // 2 - 1
    if changes is None or changes > 2:
        pairs.append({"a": a, "b": b, "changes": changes})
print(json.dumps(pairs))
