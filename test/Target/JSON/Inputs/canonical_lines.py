"""Exit 0 when every line of an exported document (`-` is stdin) is compact
JSON with sorted keys, the text nlohmann::json::dump writes (lit helper).

The exporter writes one node, operator entry or graph-level entry per line.
Each is parsed and written again with Python's json.dumps(sort_keys=True,
separators=(",", ":"), ensure_ascii=False), which escapes strings as
nlohmann does (\\" \\\\ \\b \\f \\n \\r \\t, other control characters as
lower-case \\u00xx, nothing else) and writes the shortest round-trip
digits; the two texts must be equal. Prints the first differing lines.
"""
import json
import sys

STRUCTURE = {"{", "}", "[", "]", "],", "},"}


def main() -> int:
    path = sys.argv[1]
    text = (sys.stdin if path == "-" else open(path, encoding="utf-8")).read()
    bad = 0
    for number, line in enumerate(text.split("\n"), 1):
        body = line.rstrip(",")
        if not body or body in STRUCTURE or body.endswith(":[") or body.endswith(":{"):
            continue
        entry = body.startswith('"')  # "key":value
        value = json.loads("{" + body + "}" if entry else body)
        again = json.dumps(value, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)
        if entry:
            again = again[1:-1]
        if again != body:
            bad += 1
            if bad <= 3:
                print(f"line {number}:\n  got      {body[:300]}\n"
                      f"  expected {again[:300]}")
    return 1 if bad else 0


sys.exit(main())
