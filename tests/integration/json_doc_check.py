#!/usr/bin/python3
"""Checks a `ckptfwd ... --json` output against its table in docs/json.md.

usage: json_doc_check.py DOC SECTION OUTPUT [--lines] [--source NAME] [--except KEY]...
           [--require-nonempty]

SECTION is the text of the section heading between the backquotes, e.g.
"ckptfwd ls STORE --json". OUTPUT holds one JSON object, or with --lines one per line
(with --source, only the lines whose "source" is NAME are checked). Every key of the
output must be listed in the table (key paths like files[].path), with a value of the
listed type; every listed key must be there, unless its type says "absent unless", or it
lies inside an array that is empty or an object that is absent or null. --except KEY drops a listed top-level key (schema
check prints inspect's keys without "file"). Prints what it checked; exits 1 with every
mismatch otherwise.
"""
import json
import re
import sys


def read_table(doc_path, section):
    """The rows `| `key` | type | meaning |` of the section headed ## `SECTION`."""
    text = open(doc_path, encoding="utf-8").read()
    headings = list(re.finditer(r"^## `([^`]*)`\s*$", text, re.M))
    for i, m in enumerate(headings):
        if m.group(1) != section:
            continue
        body = text[m.end() : headings[i + 1].start() if i + 1 < len(headings) else len(text)]
        rows = {}
        for line in body.splitlines():
            row = re.match(r"^\| `([^`]+)` \| ([^|]+) \|", line)
            if row:
                rows[row.group(1)] = row.group(2).strip()
        return rows
    sys.exit(f"{doc_path}: no section ## `{section}`")


def type_ok(value, typ):
    nullable = "or null" in typ
    if value is None:
        return nullable
    base = typ.split(",")[0].replace(" or null", "").strip()
    if base.startswith("array"):
        return isinstance(value, list)
    return {
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
    }.get(base, False)


def walk(value, prefix, found, nonempty):
    """found: key path -> values seen; nonempty: array paths with at least one object."""
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{prefix}.{k}" if prefix else k
            found.setdefault(path, []).append(v)
            walk(v, path, found, nonempty)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                nonempty.add(prefix)
                walk(item, prefix + "[]", found, nonempty)


def check(obj, rows, where, problems):
    found, nonempty = {}, set()
    walk(obj, "", found, nonempty)
    for path, values in found.items():
        if path not in rows:
            problems.append(f"{where}: key {path} is not in docs/json.md")
            continue
        for v in values:
            if not type_ok(v, rows[path]):
                problems.append(f"{where}: {path} = {json.dumps(v)[:80]} is not {rows[path]}")
    for path, typ in rows.items():
        if path in found or "absent unless" in typ:
            continue
        inside = path.rsplit("[]", 1)[0] if "[]" in path else None
        if inside is not None and inside not in nonempty:
            continue  # in an array that holds no object here
        parent = path.rsplit(".", 1)[0] if "." in path else None
        if parent is not None and not any(isinstance(v, dict) for v in found.get(parent, [])):
            continue  # its object is absent or null here
        problems.append(f"{where}: documented key {path} is missing")
    return found


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    doc, section, output = args[:3]
    lines = "--lines" in args
    source = args[args.index("--source") + 1] if "--source" in args else None
    excluded = [args[i + 1] for i, a in enumerate(args) if a == "--except"]
    rows = read_table(doc, section)
    for key in excluded:
        rows = {k: t for k, t in rows.items() if k != key and not k.startswith(key + ".")}
    if not rows:
        sys.exit(f"{doc}: section `{section}` lists no keys")
    text = open(output, encoding="utf-8").read()
    objs = []
    if lines:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                sys.exit(f"{output}:{n}: not JSON ({e}): {line[:200]}")
            if source is None or obj.get("source") == source:
                objs.append((f"{output}:{n}", obj))
    else:
        try:
            objs.append((output, json.loads(text)))
        except ValueError as e:
            sys.exit(f"{output}: not one JSON object ({e}): {text[:200]}")
        if text.count("\n") != 1:
            sys.exit(f"{output}: not exactly one line")
    if not objs:
        sys.exit(f"{output}: no object to check (source {source})")
    problems = []
    for where, obj in objs:
        if not isinstance(obj, dict):
            problems.append(f"{where}: not a JSON object")
            continue
        check(obj, rows, where, problems)
    if problems:
        print("\n".join(problems[:40]))
        sys.exit(1)
    print(f"`{section}`{' source ' + source if source else ''}: {len(objs)} objects, {len(rows)} documented keys")


if __name__ == "__main__":
    main()
