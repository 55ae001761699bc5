"""Writes a mutated copy of a joint-graph JSON document to stdout (lit helper).

Usage: mutate.py INPUT EDIT...   where EDIT is one of
  set /json/pointer <json value>    replace or add the value at the pointer
  del /json/pointer                 remove the value at the pointer
  raw <python expression>           replace the whole text by eval(expr) with
                                    `text` bound to the input text
  gzip-truncate N                   gzip the text and keep the first N bytes
"""
import gzip
import json
import sys


def walk(doc, pointer):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    for p in parts[:-1]:
        doc = doc[int(p)] if isinstance(doc, list) else doc[p]
    last = parts[-1]
    return doc, (int(last) if isinstance(doc, list) else last)


def main() -> None:
    text = open(sys.argv[1]).read()
    args = sys.argv[2:]
    out: bytes | None = None
    while args:
        op = args.pop(0)
        if op == "raw":
            text = eval(args.pop(0), {"text": text})
            continue
        if op == "gzip-truncate":
            out = gzip.compress(text.encode(), mtime=0)[: int(args.pop(0))]
            continue
        doc = json.loads(text)
        parent, key = walk(doc, args.pop(0))
        if op == "set":
            value = json.loads(args.pop(0))
            if isinstance(parent, list) and key == len(parent):
                parent.append(value)
            else:
                parent[key] = value
        elif op == "del":
            del parent[key]
        else:
            sys.exit(f"unknown edit {op}")
        text = json.dumps(doc, indent=1)
    sys.stdout.buffer.write(out if out is not None else text.encode())


main()
