#!/usr/bin/env python3
"""The house rules `swift format lint` does not check (run by `make lint`):

- no line of Swift over 120 columns (string literals and comments included);
- no Swift file over 450 lines (split big types as `Type+Aspect.swift`);
- no function over 80 lines: a `func`, `init`, `deinit` or `subscript` counts from the line of its keyword through
  the line of its body's closing brace, closures included (a requirement without a body is skipped);
- the command line (Sources/SluiceCLI) imports ArgumentParser, Foundation, Logging (swift-log) and Pipeline only;
- no unused first-party import: a file that imports one of our Swift modules (a folder of Sources/, Fuzz/Sources/
  or Tests/TestSupport) must use one of the names that module declares. For `import X` these are X's declarations
  visible outside it (public, open and package ones, members of public extensions, cases of public enums,
  requirements of public protocols); for `@testable import X`, all of X's declarations outside function bodies.
  Type names, free functions, globals and members of extensions of other modules' types count wherever they occur
  as a word; a member of one of X's own types counts only after a `.`, and only when no other declaration could
  explain the word (the file's own module, the other first-party modules it imports, the common names of the
  standard library and Foundation below). The C modules (CSQLite, CLibXML2, CZlib) declare no Swift, so they are
  not checked. `import X  // house-rules: keep (reason)` is never flagged.

Words are read by a small Swift lexer that leaves out comments (nested too) and the text of string literals
(`"`, `\"\"\"`, raw `#"..."#`), but keeps the code of their interpolations `\\(...)`.
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
# Words before a `[` that starts an array, not a subscript.
KEYWORDS = {"return", "in", "case", "try", "await", "throw", "where", "else", "is", "as", "if", "guard", "while",
            "for", "switch", "yield", "some", "any", "let", "var"}
ACCESS = {"public", "open", "package", "internal", "fileprivate", "private"}
TYPES = {"class", "struct", "enum", "protocol", "actor", "extension"}
DECLARATION_STARTS = TYPES | ACCESS | {
    "func", "init", "deinit", "subscript", "var", "let", "case", "typealias", "associatedtype", "static",
    "mutating", "nonmutating", "override", "final", "convenience", "required", "nonisolated", "lazy", "import"}
ACCESSOR_REQUIREMENTS = {"get", "set", "async", "throws", "mutating", "nonmutating"}
Token = namedtuple("Token", "line kind text first")  # kind: "word" or "mark"; first: first token of its line
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
            if found and found.group().startswith(escape) and not found.group(1):
                end += 1  # an escaped character
            line, i = line + text.count("\n", i, end), end
            if found and found.group(1):
                stack.append([0])
            elif found and found.group() == close:
                stack.pop()
            continue
        found = CODE.match(text, i)
        kind, word, i = found.lastgroup, found.group(), found.end()
        if kind == "block":
            depth = 1
            while depth and i < len(text):
                inner = re.compile(r"/\*|\*/").search(text, i)
                end = inner.end() if inner else len(text)
                line, i = line + text.count("\n", i, end), end
                depth += (1 if inner and inner.group() == "/*" else -1)
        elif kind == "string":
            pounds = word.count("#")
            stack.append((word[pounds:] + "#" * pounds, "\\" + "#" * pounds))
        elif kind in ("word", "mark"):
            if stack and word in "()":
                stack[-1][0] += 1 if word == "(" else -1
                if stack[-1][0] < 0:  # the end of an interpolation
                    stack.pop()
                    continue
            first = not tokens or tokens[-1].line != line
            tokens.append(Token(line, kind, word.strip("`") if word.startswith("`") else word, first))
        line += word.count("\n")
    return tokens


def body_end(tokens, index):
    """The index of the closing brace of the body of the declaration at `index`, or None if it has no body."""
    depth = 0
    for i in range(index + 1, len(tokens)):
        token = tokens[i]
        if depth == 0 and i > index + 1 and token.first and token.kind == "word" and token.text in DECLARATION_STARTS:
            return None
        if token.kind == "mark" and token.text in ("(", "["):
            depth += 1
        elif token.kind == "mark" and token.text in (")", "]"):
            depth -= 1
        elif depth == 0 and (token.text in ("}", ";") or (token.first and token.text in ("@", "#"))):
            return None
        elif depth == 0 and token.text == "{":
            break
    else:
        return None
    for j in range(i, len(tokens)):
        depth += {"{": 1, "}": -1}.get(tokens[j].text, 0) if tokens[j].kind == "mark" else 0
        if depth == 0:  # a requirement's `{ get set }` is no body
            inner = {t.text for t in tokens[i + 1:j]}
            return None if inner and inner <= ACCESSOR_REQUIREMENTS else j
    return None


def functions(tokens):
    """(line, name, lines) for each function, initializer, deinitializer and subscript with a body."""
    for index, token in enumerate(tokens):
        after = tokens[index + 1] if index + 1 < len(tokens) else Token(0, "", "", False)
        before = tokens[index - 1].text if index else ""
        if token.kind != "word" or before.endswith(".") or after.text == ":":
            continue
        if token.text == "func" or (token.text in ("init", "deinit", "subscript") and after.kind == "mark"):
            end = body_end(tokens, index)
            if end is not None:
                name = after.text if token.text == "func" else token.text
                yield token.line, name, tokens[end].line - token.line + 1


def signature(tokens, index):
    """The type names in the header of the declaration at `index` (up to its body); for a `var` or `let` without
    a type, all the words of its initial value."""
    depth = 0
    for i in range(index, len(tokens)):
        token = tokens[i]
        if depth == 0 and i > index and (token.text in ("{", "}", ";") or (
                token.first and token.kind == "word" and tokens[i - 1].text not in (",", "=", "->", ":"))):
            break
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(token.text, 0) if token.kind == "mark" else 0
    inferred = tokens[index].text in ("var", "let") and tokens[min(index + 2, i)].text != ":"
    return {t.text for t in tokens[index + 1:i] if t.kind == "word" and (inferred or t.text[0].isupper())}


def declarations(tokens):
    """The declarations outside function bodies, as (name, visible, owner, is a type), and the words of each type's
    declaration and extensions. `visible`: public, open or package, or made so by a public extension, enum (its
    cases) or protocol (its requirements). `owner`: the (extended) type of a member, None at the top level. An
    initializer is named `init`, a subscript `[`. And the words of the signatures of each name."""
    scopes, pending, found, words, signatures = [("file", None, None, 0)], None, [], {}, {}
    for index, token in enumerate(tokens):
        kind, owner, scope_access, opened = scopes[-1]
        if token.kind == "mark" and token.text in "{}":
            if token.text == "{":
                scopes.append(pending or ("code", None, None, 0))
            elif len(scopes) > 1 and scopes.pop()[0] != "code":
                words.setdefault(owner.split(".")[-1], set()).update(t.text for t in tokens[opened:index])
            pending = None
            continue
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
        if token.text in TYPES and word.kind == "word" and word.text not in DECLARATION_STARTS:
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


root = pathlib.Path(__file__).resolve().parent.parent
paths = [path for path in sorted(root.glob("**/*.swift"))
         if not any(part.startswith(".build") or part == ".git" for part in path.relative_to(root).parts)]
sources = {path: path.read_text(encoding="utf-8") for path in paths}
tokens = {path: lex(text) for path, text in sources.items()}


def module_of(relative):
    """The module of a source file: its folder under Sources/, Tests/ or Fuzz/Sources/ (None for Package.swift)."""
    parts = relative.parts[1:] if relative.parts[0] == "Fuzz" else relative.parts
    return parts[1] if len(parts) > 2 and parts[0] in ("Sources", "Tests") else None


def imports(path):
    """(line, module, @testable) for each import of the file."""
    words = tokens[path]
    for index, token in enumerate(words):
        if token.text == "import" and token.kind == "word" and index + 1 < len(words) and (
                token.first or words[index - 1].text in ACCESS | {"testable", "_exported"}):
            name = words[index + 2] if words[index + 1].text in TYPES | {"typealias", "func", "var", "let"} \
                else words[index + 1]
            yield token.line, name.text, any(t.text == "testable" for t in words[index - 2:index])


declared, mentions, signatures, imports_of = {}, {}, {}, {}  # by module (first-party ones only)
for path in paths:
    module = module_of(path.relative_to(root))
    if module:
        found, words, typed = declarations(tokens[path])
        declared.setdefault(module, []).extend(found)
        for table, new in ((mentions, words), (signatures, typed)):
            for name, mentioned in new.items():
                table.setdefault(module, {}).setdefault(name, set()).update(mentioned)
        imports_of.setdefault(module, set()).update(name for _, name, _ in imports(path))


def dependencies(module):
    """The first-party modules `module` imports, directly or not."""
    found, todo = set(), [module]
    while todo:
        todo += [name for name in imports_of.get(todo.pop(), ()) if name in declared and name not in found]
        found.update(todo)
    return found


def used(module, testable, importer, words, after_dot, subscripts):
    """Whether a file of `importer` with these words uses `module`: a type, free function, global or member of
    another module's type that `module` declares shows anywhere, or a member of one of its types shows after a `.`
    (or a subscript `x[...]` does) while the file may hold a value of that type: the type is named in the signature
    of a name the file uses, declared in `importer` or a module it depends on (and so on, through the names those
    signatures use), or in the declaration of another such type."""
    offered = [(name, owner, is_type) for name, visible, owner, is_type in declared[module] if visible or testable]
    types = {name for name, _, _, is_type in declared[module] if is_type}
    if words & {name for name, owner, is_type in offered if is_type or owner is None
                or owner.split(".")[0] not in types}:
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
    relative = path.relative_to(root)
    lines = sources[path].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_LINES:
        breaches.append(f"{relative}:{MAX_LINES + 1}: the file has {len(lines)} lines (at most {MAX_LINES})")
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_COLUMNS:
            breaches.append(f"{relative}:{number}: the line has {len(line)} columns (at most {MAX_COLUMNS})")
    for number, name, length in functions(tokens[path]):
        if length > MAX_FUNCTION_LINES:
            breaches.append(f"{relative}:{number}: the function {name} has {length} lines "
                            f"(at most {MAX_FUNCTION_LINES})")
    imported = list(imports(path))
    if relative.parts[:2] == ("Sources", "SluiceCLI"):
        for number, name, _ in imported:
            if name not in CLI_IMPORTS:
                breaches.append(f"{relative}:{number}: the command line imports {name} "
                                f"(only {', '.join(sorted(CLI_IMPORTS))})")
    import_lines = {number for number, _, _ in imported}
    code = tokens[path]
    words = {t.text for t in code if t.kind == "word" and t.line not in import_lines}
    after_dot = {t.text for i, t in enumerate(code) if t.kind == "word" and i and code[i - 1].text.endswith(".")}
    subscripts = any(t.text == "[" and i and (code[i - 1].text in (")", "]", "?", "!") or code[i - 1].kind == "word"
                     and code[i - 1].text not in KEYWORDS) for i, t in enumerate(code))
    for number, name, testable in imported:
        if name in declared and KEEP not in lines[number - 1] and not used(
                name, testable, module_of(relative), words, after_dot, subscripts):
            breaches.append(f"{relative}:{number}: import {name} is unused")
for breach in breaches:
    print(breach)
sys.exit(1 if breaches else 0)
