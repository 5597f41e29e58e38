#!/usr/bin/env python3
"""Writes sluice(1), the man page, from the command definitions themselves: the JSON that
`sluice --experimental-dump-help` prints (ArgumentParser's description of every command, argument
and option). Usage: scripts/man-page.py SLUICE_BINARY > sluice.1
"""
import datetime
import json
import subprocess
import sys


def roff(text):
    """Text as roff: backslashes and leading dots or quotes escaped."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line[:1] in (".", "'") else line for line in text.split("\n"))


def discussion(text):
    """A discussion: paragraphs filled, indented lines (examples, tables) kept as they are."""
    out = []
    for block in text.strip("\n").split("\n\n"):
        lines = block.split("\n")
        prose = [line for line in lines if not line.startswith("  ")]
        if len(prose) == len(lines):
            out += [".PP", roff(" ".join(line.strip() for line in lines))]
        else:
            out += [".PP", roff(lines[0]) if not lines[0].startswith("  ") else "", ".nf", ".RS 4"]
            out += [roff(line[2:]) for line in lines if line.startswith("  ")]
            out += [".RE", ".fi"]
    return out


def option_name(argument):
    names = []
    for name in argument.get("names", []):
        names.append(("-" if name["kind"] == "short" else "--") + name["name"])
    label = ", ".join("\\fB" + roff(name) + "\\fR" for name in names)
    if argument["kind"] == "positional":
        return "\\fI<" + roff(argument["valueName"]) + ">\\fR"
    if argument["kind"] == "option":
        label += " \\fI<" + roff(argument["valueName"]) + ">\\fR"
    return label


def arguments(command):
    out = []
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True):
            continue
        out += [".TP", option_name(argument), roff(argument.get("abstract", ""))]
        extra = []
        if argument.get("allValueStrings"):
            extra.append("values: " + ", ".join(argument["allValueStrings"]))
        if argument.get("defaultValue") not in (None, ""):
            extra.append("default: " + argument["defaultValue"])
        if extra:
            out.append(roff("(" + "; ".join(extra) + ")"))
    return out


def main():
    info = json.loads(subprocess.run([sys.argv[1], "--experimental-dump-help"], check=True,
                                     capture_output=True, text=True).stdout)["command"]
    version = subprocess.run([sys.argv[1], "--version"], check=True, capture_output=True, text=True).stdout.strip()
    today = datetime.date.today().isoformat()
    out = [f'.TH SLUICE 1 "{today}" "Sluice {version}" "User Commands"', ".SH NAME",
           "sluice \\- " + roff(info["abstract"]), ".SH SYNOPSIS", "\\fBsluice\\fR \\fIcommand\\fR [\\fIoptions\\fR]",
           ".SH DESCRIPTION"]
    out += discussion(info.get("discussion", ""))
    out += [".SH COMMANDS"]
    for command in info["subcommands"]:
        if command["commandName"] == "help" or not command.get("shouldDisplay", True):
            continue
        out += [".SS " + roff("sluice " + command["commandName"]), roff(command.get("abstract", ""))]
        out += discussion(command.get("discussion", ""))
        out += arguments(command)
    out += [".SH FILES", ".TP", "\\fItarget\\fB.lock\\fR", "The lock a run holds while it writes the target.", ".TP",
            "\\fItarget\\fB.rejects\\-\\fItime\\fB.jsonl\\fR",
            "The records a run rejected, one JSON object per line (a new file per run).",
            ".SH SEE ALSO", "sqlite3(1)"]
    print("\n".join(out))


main()
