#!/usr/bin/env python3
"""The house rules `swift format lint` does not check (run by `make lint`):

- no line of Swift over 120 columns (string literals and comments included);
- no Swift file over 450 lines (split big types as `Type+Aspect.swift`);
- no function over 80 lines: a `func`, `init`, `deinit` or `subscript`, from the line of its keyword through the
  line of its body's closing brace, closures included (a requirement, without a body, is skipped);
- the command line (Sources/SluiceCLI) imports ArgumentParser, Foundation, Logging (swift-log) and Pipeline only;
- no unused first-party import (of a folder of Sources/, Fuzz/Sources/ or Tests/TestSupport; the C modules declare no
  Swift and are not checked). A file uses X if it names one of X's types, free functions or globals, or a member X
  adds to another module's type; or if it writes `.m` (or `x[...]`) for a member `m` (a subscript) of a type T of X
  it may hold a value of: T is in the signature of a word the file uses, as declared in the file's module or a
  module that one imports (and so on through those signatures' words), or in the declaration of another such type
  of X. What X offers: its public, open and package declarations, members of public extensions, cases of public
  enums, requirements of public protocols; to `@testable import X`, all of them. `import X  // house-rules: keep
  (why)` is never flagged.

Words come from a small Swift lexer that leaves out comments (nested ones too) and the text of string literals
(`"..."`, multi-line, raw `#"..."#`), keeping the code of their interpolations.
Prints one line per breach, `path:line: message`, and exits 1 if there is any.
"""
import pathlib
import re
import sys
from collections import namedtuple

MAX_COLUMNS = 120
MAX_LINES = 450
MAX_FUNCTION_LINES = 80
CLI_IMPORTS = {"ArgumentParser", "Foundation", "Logging", "Pipeline"}
KEEP = "// house-rules: keep"
ACCESS = {"public", "open", "package", "internal", "fileprivate", "private"}
TYPES = {"class", "struct", "enum", "protocol", "actor", "extension"}
STARTS = TYPES | ACCESS | {"func", "init", "deinit", "subscript", "var", "let", "case", "typealias", "associatedtype",
                           "static", "mutating", "nonmutating", "override", "final", "convenience", "required",
                           "nonisolated", "lazy", "import"}  # words that start a declaration
ACCESSORS = {"get", "set", "async", "throws", "mutating", "nonmutating"}  # `{ get set }` is a requirement, no body
NOT_SUBSCRIPTED = {"return", "in", "case", "try", "await", "throw", "where", "else", "is", "as", "if", "guard",
                   "while", "for", "switch", "yield", "some", "any", "let", "var"}  # `return [...]` is an array
DEPTH = {"(": 1, "[": 1, ")": -1, "]": -1}
Token = namedtuple("Token", "line kind text first")  # kind: "word" or "mark"; first: the first token of its line
CODE = re.compile(r"""(?P<newline>\n)|(?P<space>[ \t\r\f\v]+)|(?P<comment>//[^\n]*)|(?P<block>/\*)
    |(?P<string>\#*(?:\"\"\"|\"))|(?P<word>[A-Za-z_]\w*|`[^`\n]+`|\$\w+)|(?P<number>\d\w*(?:\.\d\w*)?)
    |(?P<character>'(?:\\.|[^'\\\n])')|(?P<mark>(?:[-=+!*%<>&|^~?.]|/(?![/*]))+|.)""", re.X)


def lex(text):
    """The words and marks of a Swift source, without comments and the text of string literals."""
    tokens, line, i, stack = [], 1, 0, []  # stack: open strings (close, escape) and interpolations [parens]
    while i < len(text):
        if stack and len(stack[-1]) == 2:  # in the text of a string literal
            close, escape = stack[-1]
            found = re.compile(re.escape(escape) + r"(\()?|" + re.escape(close)).search(text, i)
            end = found.end() if found else len(text)
            end += 1 if found and found.group().startswith(escape) and not found.group(1) else 0  # `\"`
            line, i = line + text.count("\n", i, end), end
            if found and found.group(1):
                stack.append([0])
            elif found and found.group() == close:
                stack.pop()
            continue
        found = CODE.match(text, i)
        kind, word, i = found.lastgroup, found.group(), found.end()
        depth = 1 if kind == "block" else 0
        while depth and i < len(text):  # a comment `/* ... */`, nested ones in it
            inner = re.compile(r"/\*|\*/").search(text, i)
            end = inner.end() if inner else len(text)
            depth += 1 if inner and inner.group() == "/*" else -1
            line, i = line + text.count("\n", i, end), end
        if kind == "string":
            pounds = word.count("#")
            stack.append((word[pounds:] + "#" * pounds, "\\" + "#" * pounds))
        elif kind in ("word", "mark"):
            if stack and word in ("(", ")"):
                stack[-1][0] += 1 if word == "(" else -1
                if stack[-1][0] < 0:  # the end of an interpolation
                    stack.pop()
                    continue
            tokens.append(Token(line, kind, word.strip("`"), not tokens or tokens[-1].line != line))
        line += word.count("\n")
    return tokens


def functions(tokens):
    """(line, name, lines) for each function, initializer, deinitializer and subscript with a body."""
    for index, token in enumerate(tokens[:-1]):
        after, before = tokens[index + 1], tokens[index - 1].text if index else ""
        if token.kind != "word" or before.endswith(".") or after.text == ":" or not (
                token.text == "func" or token.text in ("init", "deinit", "subscript") and after.kind == "mark"):
            continue
        depth, start = 0, None
        for i in range(index + 1, len(tokens)):  # the body's `{`, unless the declaration ends first
            t = tokens[i]
            if depth == 0 and (t.text in ("}", ";") or t.first and (t.text in ("@", "#") or t.text in STARTS)):
                break
            if depth == 0 and t.text == "{":
                start = i
                break
            depth += DEPTH.get(t.text, 0) if t.kind == "mark" else 0
        for end in range(start or len(tokens), len(tokens)):
            depth += {"{": 1, "}": -1}.get(tokens[end].text, 0) if tokens[end].kind == "mark" else 0
            if depth == 0:
                inner = {t.text for t in tokens[start + 1:end]}
                if not inner or not inner <= ACCESSORS:
                    name = after.text if token.text == "func" else token.text
                    yield token.line, name, tokens[end].line - token.line + 1
                break


def signature(tokens, index):
    """The type names in the header of the declaration at `index`; all the words of an untyped `var`/`let`."""
    depth = 0
    for i in range(index + 1, len(tokens)):
        t = tokens[i]
        if depth == 0 and (t.text in ("{", "}", ";") or t.first and t.kind == "word"
                           and tokens[i - 1].text not in (",", "=", "->", ":")):
            break
        depth += DEPTH.get(t.text, 0) if t.kind == "mark" else 0
    inferred = tokens[index].text in ("var", "let") and tokens[min(index + 2, i)].text != ":"
    return {t.text for t in tokens[index + 1:i] if t.kind == "word" and (inferred or t.text[0].isupper())}


def declarations(tokens):
    """The declarations outside function bodies, as (name, visible, owner type or None, is a type), the words in
    each type's declaration and extensions, and the words of each name's signatures. An initializer is named
    `init`, a subscript `[`."""
    scopes, pending, found, words, signatures = [("file", None, None, 0)], None, [], {}, {}
    for index, token in enumerate(tokens):
        kind, owner, scope_access, opened = scopes[-1]
        if token.kind == "mark" and token.text in ("{", "}"):
            if token.text == "{":
                scopes.append(pending or ("code", None, None, 0))
            elif len(scopes) > 1 and scopes.pop()[0] != "code":
                words.setdefault(owner.split(".")[-1], set()).update(t.text for t in tokens[opened:index])
            pending = None
        if kind == "code" or token.kind != "word" or (index and tokens[index - 1].text.endswith(".")):
            continue
        start = index  # the modifiers of the declaration: back to the start of its line, `{`, `}` or `;`
        while start and not tokens[start].first and tokens[start - 1].text not in ("{", "}", ";"):
            start -= 1
        modifiers = [t.text for i, t in enumerate(tokens[start:index], start) if tokens[i + 1].text != "("]
        access = next((word for word in modifiers if word in ACCESS), None)
        visible = access in ("public", "open", "package") or (
            access is None and scope_access in ("public", "open") and kind in ("extension", "protocol", "enum"))
        names, word = [], tokens[index + 1] if index + 1 < len(tokens) else token
        if token.text in TYPES and word.kind == "word" and word.text not in STARTS:
            path = [word.text]  # `extension Outer.Inner`
            while token.text == "extension" and tokens[index + 2 * len(path)].text == ".":
                path.append(tokens[index + 2 * len(path) + 1].text)
            pending = (token.text, ".".join(path), access, index)
            names = [] if token.text == "extension" else [word.text]
        elif token.text in ("func", "typealias", "associatedtype"):
            names = [word.text]
            if token.text == "typealias":  # what it stands for is mentioned by it
                words.setdefault(word.text, set()).update(t.text for t in tokens[index:] if t.line == token.line)
        elif token.text in ("init", "subscript") and kind != "file":
            names = ["init" if token.text == "init" else "["]
        elif token.text in ("var", "let") or (token.text == "case" and kind == "enum"):
            depth = 0  # the names of `let a = 1, b = 2` and `case a, b(Int)`
            for i in range(index + 1, len(tokens)):
                if tokens[i].first and tokens[i - 1].text != ",":
                    break
                depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tokens[i].text, 0)
                if depth == 0 and tokens[i].kind == "word" and tokens[i - 1].text in (token.text, ","):
                    names.append(tokens[i].text)
        is_type = token.text in TYPES | {"typealias", "associatedtype"}
        found.extend((name, visible, None if kind == "file" else owner, is_type) for name in names)
        for name in names + ([pending[1].split(".")[-1]] if token.text == "extension" and pending else []):
            signatures.setdefault(name, set()).update(signature(tokens, index))
    return found, words, signatures


def module_of(relative):
    """The module of a source file: its folder in Sources/, Tests/ or Fuzz/Sources/ (None for Package.swift)."""
    parts = relative.parts[1:] if relative.parts[0] == "Fuzz" else relative.parts
    return parts[1] if len(parts) > 2 and parts[0] in ("Sources", "Tests") else None


def imports(tokens):
    """(line, module, @testable) for each import of a file."""
    for index, token in enumerate(tokens[:-1]):
        if token.text == "import" and token.kind == "word" and (
                token.first or tokens[index - 1].text in ACCESS | {"testable", "_exported"}):
            name = tokens[index + (2 if tokens[index + 1].text in TYPES | {"typealias", "func", "var", "let"} else 1)]
            yield token.line, name.text, any(t.text == "testable" for t in tokens[index - 2:index])


root = pathlib.Path(__file__).resolve().parent.parent
paths = [path for path in sorted(root.glob("**/*.swift"))
         if not any(part.startswith(".build") or part == ".git" for part in path.relative_to(root).parts)]
sources = {path: path.read_text(encoding="utf-8") for path in paths}
tokens = {path: lex(text) for path, text in sources.items()}
declared, mentions, signatures, imports_of = {}, {}, {}, {}  # by module (first-party ones only)
for path in paths:
    module = module_of(path.relative_to(root))
    if module:
        found, words, typed = declarations(tokens[path])
        declared.setdefault(module, []).extend(found)
        for table, new in ((mentions, words), (signatures, typed)):
            for name, mentioned in new.items():
                table.setdefault(module, {}).setdefault(name, set()).update(mentioned)
        imports_of.setdefault(module, set()).update(name for _, name, _ in imports(tokens[path]))


def dependencies(module):
    """The first-party modules `module` imports, directly or not."""
    found, todo = set(), [module]
    while todo:
        todo += [name for name in imports_of.get(todo.pop(), ()) if name in declared and name not in found]
        found.update(todo)
    return found


def used(module, testable, importer, words, after_dot, subscripts):
    """Whether a file of module `importer`, with these words, uses `module` (see the top of this file)."""
    offered = [(name, owner, is_type) for name, visible, owner, is_type in declared[module] if visible or testable]
    types = {name for name, _, _, is_type in declared[module] if is_type}
    if words & {name for name, owner, is_type in offered if is_type or not owner or owner.split(".")[0] not in types}:
        return True
    tables = [signatures[m] for m in {importer} | dependencies(importer) - {module} if m in signatures]
    seen, todo = set(words), list(words - {"init"})  # an initializer's parameters are no values of the file
    while todo:
        word = todo.pop()
        for table in tables:
            todo += table.get(word, set()) - seen
            seen.update(table.get(word, ()))
    reachable, todo = types & seen, list(types & seen)
    while todo:
        todo += [name for name in mentions[module].get(todo.pop(), set()) & types if name not in reachable]
        reachable.update(todo)
    members = {name for name, owner, _ in offered if owner and owner.split(".")[-1] in reachable}
    return bool(after_dot & members) or ("[" in members and subscripts)


breaches = []
for path in paths:
    relative, code = path.relative_to(root), tokens[path]
    lines = sources[path].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_LINES:
        breaches.append(f"{relative}:{MAX_LINES + 1}: the file has {len(lines)} lines (at most {MAX_LINES})")
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_COLUMNS:
            breaches.append(f"{relative}:{number}: the line has {len(line)} columns (at most {MAX_COLUMNS})")
    for number, name, length in functions(code):
        if length > MAX_FUNCTION_LINES:
            breaches.append(f"{relative}:{number}: the function {name} has {length} lines "
                            f"(at most {MAX_FUNCTION_LINES})")
    imported = list(imports(code))
    for number, name, _ in imported if relative.parts[:2] == ("Sources", "SluiceCLI") else []:
        if name not in CLI_IMPORTS:
            breaches.append(f"{relative}:{number}: the command line imports {name} "
                            f"(only {', '.join(sorted(CLI_IMPORTS))})")
    import_lines = {number for number, _, _ in imported}
    words = {t.text for t in code if t.kind == "word" and t.line not in import_lines}
    after_dot = {t.text for i, t in enumerate(code) if t.kind == "word" and i and code[i - 1].text.endswith(".")}
    subscripts = any(t.text == "[" and i and (code[i - 1].text in (")", "]", "?", "!") or code[i - 1].kind == "word"
                     and code[i - 1].text not in NOT_SUBSCRIPTED) for i, t in enumerate(code))
    for number, name, testable in imported:
        if name in declared and KEEP not in lines[number - 1] and not used(
                name, testable, module_of(relative), words, after_dot, subscripts):
            breaches.append(f"{relative}:{number}: import {name} is unused")
for breach in breaches:
    print(breach)
sys.exit(1 if breaches else 0)
