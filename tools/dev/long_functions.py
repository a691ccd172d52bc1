#!/usr/bin/python3
"""List C++ function definitions longer than a line limit.

Usage: tools/dev/long_functions.py [--min N] [--all] [PATH...]

PATHs are files or directories (default: src/ next to this script's
repository root); directories are searched for *.cc, *.cpp, *.h, *.hpp.
Prints "file:line name length" for every function whose definition spans
more than N lines (default 80), longest first; --all prints every function.

The length of a function is the number of lines from the first line of its
signature (after any preceding declaration, brace or preprocessor line) to
its closing brace, inclusive. A lambda, local class or nested block counts
toward the function that encloses it; a lambda bound to a variable at
namespace or class scope counts as a function named after that variable.

This is a brace-matching heuristic, not a parser: comments, string and
character literals (raw strings included) and preprocessor lines are blanked
first, then braces are matched. A brace opens
  - a scope to look into: namespace, class, struct, union, extern "C";
  - a function body: the text before it has a parenthesised parameter list
    at its top level (and no top-level '=' unless it is a lambda);
  - anything else (enum, aggregate initializer, requires expression): skipped.
"""

import argparse
import os
import re
import signal
import sys

SOURCE_EXTENSIONS = (".cc", ".cpp", ".cxx", ".h", ".hpp")


def blank_non_code(text):
    """Returns text with comments, literals and preprocessor lines replaced
    by spaces; newlines are kept, so offsets and line numbers still match."""
    out = list(text)
    n = len(text)
    i = 0
    at_line_start = True

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if at_line_start and c == "#":
            # Preprocessor directive, with backslash continuations.
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            blank(i, j)
            i = j
            continue
        at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:i + 40])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            blank(i, end)
            i = end
            continue
        if c == '"' or c == "'":
            if c == "'" and i > 0 and text[i - 1].isalnum():
                # A digit separator (1'000) rather than a character literal
                # (the word before it starts with a digit).
                k = i - 1
                while k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_'."):
                    k -= 1
                if text[k].isdigit():
                    i += 1
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
            continue
        i += 1
    return "".join(out)


def top_level(head):
    """The parts of head outside (), [] and {} (template angle brackets are
    not tracked; the callers only look for '(' and '=')."""
    depth = 0
    parts = []
    for ch in head:
        if ch in "([{":
            if depth == 0:
                parts.append(ch)
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
            if depth == 0:
                parts.append(ch)
        elif depth == 0:
            parts.append(ch)
    return "".join(parts)


CONTAINER = re.compile(r'^(?:template\s*<.*>\s*)?(?:namespace\b|extern\s*"\s*"\s*$|'
                       r"(?:class|struct|union)\b)", re.S)
ENUM = re.compile(r"^(?:typedef\s+)?enum\b")
IDENT_BEFORE_PAREN = re.compile(r"(operator\s*(?:\(\s*\)|[^\s(]+)|~?[A-Za-z_]\w*(?:\s*<[^()]*>)?)\s*$")


def function_name(head, scope_names):
    """The (qualified) name of the function whose signature is head."""
    flat = " ".join(head.split())
    depth = 0
    for idx, ch in enumerate(flat):
        if ch == "(" and depth == 0:
            before = flat[:idx]
            if re.search(r"operator\s*$", before):
                # operator()(...): the first () is part of the name.
                continue
            m = re.search(r"((?:[A-Za-z_]\w*(?:\s*<[^()]*>)?\s*::\s*)*)" +
                          IDENT_BEFORE_PAREN.pattern, before)
            if not m:
                return None
            name = re.sub(r"\s+", "", m.group(0))
            if scope_names and "::" not in name:
                name = "::".join(scope_names) + "::" + name
            return name
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
    return None


def lambda_variable(head):
    """For 'auto name = [..](..)' returns name, else None."""
    m = re.search(r"([A-Za-z_]\w*)\s*=\s*\[", " ".join(head.split()))
    return m.group(1) if m else None


def matching_brace(code, open_at):
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


def scan(code, start, end, scope_names, found, line_of):
    """Walks code[start:end] (one namespace or class body) and appends
    (offset of signature, name, offset of closing brace) to found."""
    head_start = start
    i = start
    while i < end:
        ch = code[i]
        if ch == ";" or ch == "}":
            head_start = i + 1
        elif ch == ":" and code[i - 1] != ":" and i + 1 < end and code[i + 1] != ":":
            # Access specifiers ("public:") end a head inside a class; a
            # constructor's initializer list never starts a new head because
            # its ':' is followed by the function's own brace below.
            word = code[head_start:i].strip()
            if word in ("public", "private", "protected"):
                head_start = i + 1
        elif ch == "{":
            head = code[head_start:i].strip()
            close = matching_brace(code, i)
            flat = " ".join(head.split())
            tl = top_level(flat)
            if CONTAINER.match(flat) and "(" not in tl.split(":")[0] and "=" not in tl:
                m = re.match(r"^(?:template\s*<.*>\s*)?(?:class|struct|union)\s+"
                             r"(?:\[\[[^\]]*\]\]\s*)?(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*)",
                             flat)
                inner = scope_names + [m.group(1)] if m else scope_names
                scan(code, i + 1, close, inner, found, line_of)
            elif ENUM.match(flat):
                pass
            elif "(" in tl and ("=" not in re.sub(r"operator\s*[^\s(]*", "", tl)
                                or "[" in tl):
                name = None
                if "=" in re.sub(r"operator\s*[^\s(]*", "", tl):
                    name = lambda_variable(head)
                    if name and scope_names:
                        name = "::".join(scope_names) + "::" + name
                else:
                    name = function_name(head, scope_names)
                if name:
                    sig = head_start
                    while sig < i and code[sig].isspace():
                        sig += 1
                    found.append((sig, name, close))
            i = close
            head_start = close + 1
        i += 1


def functions_in(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = blank_non_code(text)
    line_starts = [0]
    for k, ch in enumerate(text):
        if ch == "\n":
            line_starts.append(k + 1)

    def line_of(offset):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    found = []
    scan(code, 0, len(code), [], found, line_of)
    result = []
    for sig, name, close in found:
        first, last = line_of(sig), line_of(close)
        result.append((path, first, name, last - first + 1))
    return result


def source_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(SOURCE_EXTENSIONS):
                        yield os.path.join(root, f)
        else:
            yield p


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quietly, when piped into head
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min", type=int, default=80,
                        help="print functions longer than this many lines (default 80)")
    parser.add_argument("--all", action="store_true", help="print every function")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    paths = args.paths
    if not paths:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        paths = [os.path.relpath(os.path.join(root, "src"))]
    rows = []
    for path in source_files(paths):
        rows.extend(functions_in(path))
    rows.sort(key=lambda r: (-r[3], r[0], r[1]))
    for path, line, name, length in rows:
        if args.all or length > args.min:
            print(f"{path}:{line} {name} {length}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
