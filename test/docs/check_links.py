#!/usr/bin/env python3
"""Fails when a Markdown file of the repository (README.md, docs/*.md,
runtime/README.md, ... every *.md at the top level and under the source
folders) points at a file the repository does not have: a clone holds only
the repository, so the documentation must stand on it.

Checked, relative to the repository root (or to the document for links):
  - Markdown links and images [text](target) whose target is not a URL or
    an in-page anchor: the file or folder must exist;
  - paths in backticks or links that leave the repository (start with ../
    or /): always an error;
  - paths in backticks that start with a top-level folder of the
    repository (docs/, test/, runtime/, ...) and contain no placeholder
    (<, >, *, {, }, ...): must exist. Build outputs (build/...) are not
    checked.

usage: check_links.py REPO_ROOT
"""
import os
import re
import sys

TOP = ("docs", "test", "runtime", "compiler", "dialect", "tools", "examples",
       "bench", "scripts")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"`([^`\n]+)`")


def documents(root):
    """Every tracked-looking Markdown file: the top level and the source
    folders (not build trees or .git)."""
    docs = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d in TOP]
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".md"):
                docs.append(os.path.normpath(os.path.join(rel, name)))
    return docs


def problems(root, doc):
    text = open(os.path.join(root, doc), encoding="utf-8").read()
    here = os.path.dirname(doc)
    found = []

    def where(pos):
        return f"{doc}:{text.count(chr(10), 0, pos) + 1}"

    for m in LINK.finditer(text):
        target = m.group(1).split("#")[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue  # anchor, http:, mailto:
        path = os.path.normpath(os.path.join(root, here, target))
        if not path.startswith(os.path.abspath(root) + os.sep) and \
                path != os.path.abspath(root):
            found.append(f"{where(m.start())}: link '{m.group(1)}' leaves "
                         "the repository")
        elif not os.path.exists(path):
            found.append(f"{where(m.start())}: link '{m.group(1)}' names a "
                         "file that does not exist")
    for m in CODE.finditer(text):
        token = m.group(1).strip()
        if re.match(r"^\.\./|^/(work|home|tmp/shared)", token):
            found.append(f"{where(m.start())}: path '{token}' is outside the "
                         "repository")
            continue
        if not re.match(r"^(%s)/[A-Za-z0-9_./-]*$" % "|".join(TOP), token):
            continue
        if not os.path.exists(os.path.join(root, token)):
            found.append(f"{where(m.start())}: path '{token}' does not exist "
                         "in the repository")
    return found


def main():
    root = os.path.abspath(sys.argv[1])
    docs = documents(root)
    found = [p for d in docs for p in problems(root, d)]
    for p in found:
        print(p)
    print(f"check_links: {len(docs)} documents, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
