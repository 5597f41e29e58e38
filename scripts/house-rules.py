#!/usr/bin/env python3
"""The house rules `swift format lint` does not check (run by `make lint`):

- no line of Swift over 120 columns (string literals and comments included);
- no Swift file over 600 lines (split big types as `Type+Aspect.swift`);
- the command line (Sources/SluiceCLI) imports ArgumentParser, Foundation, Logging (swift-log) and Pipeline only.

Prints one line per breach, `path:line: message`, and exits 1 if there is any.
"""
import pathlib
import re
import sys

MAX_COLUMNS = 120
MAX_LINES = 600
CLI_IMPORTS = {"ArgumentParser", "Foundation", "Logging", "Pipeline"}

root = pathlib.Path(__file__).resolve().parent.parent
breaches = []
for path in sorted(root.glob("**/*.swift")):
    relative = path.relative_to(root)
    if relative.parts[0].startswith(".build") or relative.parts[0] == ".git":
        continue
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_LINES:
        breaches.append(f"{relative}:{MAX_LINES + 1}: the file has {len(lines)} lines (at most {MAX_LINES})")
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_COLUMNS:
            breaches.append(f"{relative}:{number}: the line has {len(line)} columns (at most {MAX_COLUMNS})")
        if relative.parts[:2] == ("Sources", "SluiceCLI"):
            match = re.match(r"\s*(?:@\w+\s+)*import\s+(?:\w+\s+)?(\w+)", line)
            if match and match.group(1) not in CLI_IMPORTS:
                breaches.append(f"{relative}:{number}: the command line imports {match.group(1)} "
                                f"(only {', '.join(sorted(CLI_IMPORTS))})")
for breach in breaches:
    print(breach)
sys.exit(1 if breaches else 0)
