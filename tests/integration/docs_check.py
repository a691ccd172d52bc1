#!/usr/bin/python3
"""docs_check.py REPO: the README and docs/ hold together.

- README.md fits one screen: at most 60 lines.
- Every relative link of README.md and docs/*.md names a file of the repository, and
  its #anchor a heading of that file (GitHub's anchor rule).
- Every docs/*.md is reached from the README.
Prints each problem and exits 1 when there is one.
"""
import os
import re
import sys

repo = sys.argv[1]
problems = []


def anchors(path):
    out = set()
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^#{1,6} (.*)$", line.rstrip("\n"))
        if m:
            out.add(re.sub(r"[^a-z0-9 _-]", "", m.group(1).lower()).replace(" ", "-"))
    return out


def links(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


readme = os.path.join(repo, "README.md")
n = sum(1 for _ in open(readme, encoding="utf-8"))
if n > 60:
    problems.append(f"README.md: {n} lines, more than one screen (60)")

pages = [readme] + sorted(os.path.normpath(p) for p in (
    os.path.join(repo, "docs", f) for f in os.listdir(os.path.join(repo, "docs")) if f.endswith(".md")))
for page in pages:
    base = os.path.dirname(page)
    for link in links(page):
        if re.match(r"^[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = os.path.normpath(os.path.join(base, target)) if target else page
        where = os.path.relpath(page, repo)
        if not os.path.exists(path):
            problems.append(f"{where}: link {link}: {os.path.relpath(path, repo)} does not exist")
        elif anchor and path.endswith(".md") and anchor not in anchors(path):
            problems.append(f"{where}: link {link}: no heading with anchor #{anchor}")

readme_links = {os.path.normpath(os.path.join(repo, l.partition("#")[0])) for l in links(readme)}
for page in pages[1:]:
    if page not in readme_links:
        problems.append(f"README.md does not link {os.path.relpath(page, repo)}")

for p in problems:
    print(p)
print(f"docs_check: {len(pages)} pages, {len(problems)} problems")
sys.exit(1 if problems else 0)
