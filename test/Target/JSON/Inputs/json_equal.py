"""Exit 0 when two JSON documents are equal up to key order (lit helper).

Prints the first differences by JSON pointer otherwise. `.gz` inputs are
read through gzip; `-` is stdin. NaN equals NaN.
"""
import gzip
import json
import sys


def load(path):
    if path == "-":
        return json.load(sys.stdin)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def diff(x, y, path, out):
    if len(out) > 10:
        return
    if type(x) != type(y):
        out.append(f"{path or '/'}: {json.dumps(x)[:120]} != {json.dumps(y)[:120]}")
    elif isinstance(x, dict):
        for k in sorted(set(x) | set(y)):
            if k not in x or k not in y:
                out.append(f"{path}/{k}: only in the {'first' if k in x else 'second'}")
            else:
                diff(x[k], y[k], f"{path}/{k}", out)
    elif isinstance(x, list):
        if len(x) != len(y):
            out.append(f"{path}: {len(x)} elements != {len(y)}")
        for i, (p, q) in enumerate(zip(x, y)):
            diff(p, q, f"{path}/{i}", out)
    elif x != y and not (x != x and y != y):
        out.append(f"{path}: {json.dumps(x)[:120]} != {json.dumps(y)[:120]}")


out: list[str] = []
diff(load(sys.argv[1]), load(sys.argv[2]), "", out)
print("\n".join(out) if out else "equal")
sys.exit(1 if out else 0)
