#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The test scripts assert what they name: no condition escapes its assertion.
# `check NAME A && B` asserts only A (B runs after check has returned, and
# check returns 0 either way), so does `check NAME A || B`, `check NAME A | B`
# and the same after `is` or `like`, on one line or continued over several.
# Also refused: a check with no command (it passes), a check whose command
# cannot fail (true, :, echo, printf), `[[` as a check's command (a keyword,
# not a command: it always fails), a check whose name is its test
# (`check [ ... ]`), an `is` or `like` whose two values are both literal
# (a hard-coded result), and an assertion after `A &&` or `A ||` (it
# vanishes from the output when A decides so: skip with a reason instead). Scans tests/*.sh and tests/vm/*.sh, reports
# file:line, and first shows on built examples that it finds each shape.
# No root needed.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is missing (scripts/deps.sh installs it)"; exit 0; }
exec python3 - "$top_srcdir" <<'PY'
import glob, os, sys

ASSERT = ("check", "is", "like")
PREFIX = {"!", "if", "then", "elif", "else", "do", "while", "until", "{", "(", "time"}


def lex(text):
    """Split a shell script into and-or lists of the outermost level.

    Returns [(line, [(line, text), ...]), ...]: each list's pipeline
    elements, cut at &&, || and |, with the line each starts on. Quotes,
    $( ), ${ }, backquotes, comments and here-documents are skipped over,
    and a newline after \\, &&, || or | continues the list.
    """
    lists, elems, cur, line, start = [], [], [], 1, 1
    i, n = 0, len(text)
    depth = []		# open ( and { of $( ), ${ }, and quotes inside them
    heredocs = []	# (delimiter, strip tabs) to skip after this line
    pending = False	# the last operator wants a continuation

    def cut():
        nonlocal cur, start
        s = "".join(cur).strip()
        if s:
            elems.append((start, s))
        cur = []

    def end_list():
        nonlocal elems
        cut()
        if elems:
            lists.append((elems[0][0], elems))
        elems = []

    while i < n:
        c = text[i]
        if not cur or not "".join(cur).strip():
            start = line
        if c == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                line += 1
                cur.append(" ")
                i += 2
                continue
            cur.append(text[i:i + 2])
            i += 2
            continue
        if c == "'" and not (depth and depth[-1] == '"'):
            j = text.find("'", i + 1)
            j = n - 1 if j < 0 else j
            line += text.count("\n", i, j)
            cur.append(text[i:j + 1].replace("\n", " "))
            i = j + 1
            continue
        if c in '"`':	# opens, or closes the innermost of its kind
            if depth and depth[-1] == c:
                depth.pop()
            else:
                depth.append(c)
            cur.append(c)
            i += 1
            continue
        if c == "$" and i + 1 < n and text[i + 1] in "({":
            depth.append(text[i + 1])
            cur.append(text[i:i + 2])
            i += 2
            continue
        if depth and depth[-1] == '"':
            if c == "\n":
                line += 1
                c = " "
            cur.append(c)
            i += 1
            continue
        if depth and c in ")}" and depth[-1] == {")": "(", "}": "{"}[c]:
            depth.pop()
            cur.append(c)
            i += 1
            continue
        if depth and c in "({" and depth[-1] in "({":
            depth.append(c)  # nested ( ) or { }: closed by the matching one
            cur.append(c)
            i += 1
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "<" and text.startswith("<<", i) and not text.startswith("<<<", i):
            j = i + 2
            strip = j < n and text[j] == "-"
            j += strip
            while j < n and text[j] in " \t":
                j += 1
            k = j
            while k < n and text[k] not in " \t\n;&|)<>":
                k += 1
            word = text[j:k].strip("'\"\\")
            if word:
                heredocs.append((word, strip))
            cur.append(text[i:k])
            i = k
            continue
        if c == "\n":
            line += 1
            i += 1
            # here-documents begin on the next line
            for word, strip in heredocs:
                while i < n:
                    j = text.find("\n", i)
                    j = n if j < 0 else j
                    body = text[i:j]
                    i = j + 1
                    line += 1
                    if (body.lstrip("\t") if strip else body) == word:
                        break
            heredocs = []
            if depth:
                cur.append(" ")
                continue
            if pending:
                continue
            end_list()
            continue
        if depth:
            cur.append(c)
            i += 1
            continue
        if c in " \t":
            cur.append(c)
            i += 1
            continue
        if text.startswith("&&", i) or text.startswith("||", i):
            cut()
            elems.append((line, text[i:i + 2]))
            pending = True
            i += 2
            continue
        if c == "|" and not text.startswith("|&", i):
            cut()
            elems.append((line, "|"))
            pending = True
            i += 1
            continue
        if c == ";" or (c == "&" and not text.startswith("&>", i) and
                        (i == 0 or text[i - 1] not in "<>")):
            end_list()
            i += 2 if text.startswith(";;", i) else 1
            pending = False
            continue
        pending = False
        cur.append(c)
        i += 1
    end_list()
    return lists


def words(s):
    """The words of one command, with quotes kept (enough to tell a literal)."""
    out, cur, depth, i = [], "", [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            cur += s[i:i + 2]
            i += 2
            continue
        if depth and depth[-1] == "'":
            cur += c
            if c == "'":
                depth.pop()
        elif depth and depth[-1] == '"' and c not in '"$`':
            cur += c
        elif c == "'" and not (depth and depth[-1] == '"'):
            depth.append("'")
            cur += c
        elif c == '"':
            if depth and depth[-1] == '"':
                depth.pop()
            else:
                depth.append('"')
            cur += c
        elif c == "$" and i + 1 < len(s) and s[i + 1] in "({":
            depth.append(s[i + 1])
            cur += s[i:i + 2]
            i += 1
        elif depth and depth[-1] in "({" and c in "({":
            depth.append(c)
            cur += c
        elif depth and c in ")}" and depth[-1] == {")": "(", "}": "{"}[c]:
            depth.pop()
            cur += c
        elif c in " \t" and not depth:
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        out.append(cur)
    return out


def command(w):
    """Drop what may come before a command: !, if, then, {, (, VAR=x, a case pattern."""
    while w and (w[0] in PREFIX or w[0].endswith(")") and not w[0].startswith("$")
                 or ("=" in w[0] and w[0].split("=")[0].isidentifier())):
        w = w[1:]
    return w


def literal(word):
    return "$" not in word and "`" not in word


def lint(text):
    """[(line, message)] for every way a condition escapes its assertion."""
    found = []
    for _, elems in lint_lists(text):
        for k, (line, s) in enumerate(elems):
            if s in ("&&", "||", "|"):
                continue
            w = command(words(s))
            if not w or w[0] not in ASSERT:
                continue
            if k > 0:
                found.append((line, "... %s %s: the assertion runs only when what comes "
                              "before it says so, and else silently vanishes" % (elems[k - 1][1], w[0])))
            if k + 1 < len(elems):
                found.append((line, "%s ... %s: what follows runs after %s has returned, "
                              "outside the assertion" % (w[0], elems[k + 1][1], w[0])))
            if w[0] == "check":
                if len(w) < 3:
                    found.append((line, "check with no command: it always passes"))
                elif w[1] in ("[", "[[", "test"):
                    found.append((line, "check's name is its test: %s" % " ".join(w[1:3])))
                elif w[2] in ("true", ":", "echo", "printf"):
                    found.append((line, "check %s: a command that cannot fail" % w[2]))
                elif w[2] == "[[":
                    found.append((line, "check [[ ... ]]: a keyword, not a command "
                                  "(use [ ] or sh -c)"))
            elif len(w) >= 3 and literal(w[1]) and literal(w[2]):
                found.append((line, "%s with two literal values: a hard-coded result" % w[0]))
    return found


lint_lists = lex

# The shapes it must find, built here: a lint that finds nothing proves nothing.
examples = [
    ('check "a" [ "$x" = 1 ] && [ "$y" = 2 ]\n', 1),
    ('check "a" grep -q x "$f" ||\n\tgrep -q y "$f"\n', 1),
    ('check "a" \\\n\tgrep -q x "$f" &&\n\tgrep -q y "$f"\n', 1),
    ('is "$x" 1 "a" && is "$y" 2 "b"\n', 2),
    ('like "$x" "^a" "a" || diag "no"\n', 1),
    ('check "a" grep x "$f" | wc -l\n', 1),
    ('check "a" true\n', 1),
    ('check "a" :\n', 1),
    ('check "a" echo yes\n', 1),
    ('check "a"\n', 1),
    ('check [ "$x" = 1 ]\n', 1),
    ('check "a" [[ $x = 1 ]]\n', 1),
    ('is "1" "1" "a"\n', 1),
    ('if x; then check "a" [ 1 ] && y; fi\n', 1),
    # and what it must let be
    ('check "a" sh -c \'[ "$1" ] && [ "$2" ]\' - "$x" "$y"\n', 0),
    ('check "a" eval \'only_in "$f" w && only_in "$g" v\'\n', 0),
    ('is "$(a && b || c | d)" 1 "a"\n', 0),
    ('x=$(cat <<EOF\ncheck "a" true && false\nEOF\n)\nis "$x" 1 "b"\n', 0),
    ('# check "a" [ 1 ] && [ 2 ]\ncheck "a" [ "$x" ]\n', 0),
    ('check "a" python3 -c "\nimport sys\nsys.exit(not (1 and 2 or 3))"\n', 0),
    ('[ -n "$x" ] && check "a" [ "$x" = 1 ]\n', 1),
    ('[ -n "$x" ] && check "a" [ "$x" = 1 ] || fail "b"\n', 2),
]
n = 0
bad = 0


def tap(good, name, diag=()):
    global n, bad
    n += 1
    bad += not good
    print("%s %d - %s" % ("ok" if good else "not ok", n, name))
    for d in diag if not good else ():
        print("# " + d)


for src, want in examples:
    got = lint(src)
    tap(len(got) == want, "finds %d in %r" % (want, src[:60]),
        ["%d: %s" % g for g in got])

top = sys.argv[1]
files = sorted(glob.glob(os.path.join(top, "tests", "*.sh")) +
               glob.glob(os.path.join(top, "tests", "vm", "*.sh")))
tap(len(files) > 30, "scanned %d test scripts (more than 30)" % len(files))
for f in files:
    rel = os.path.relpath(f, top)
    with open(f, encoding="utf-8", errors="replace") as fh:
        got = lint(fh.read())
    tap(not got, "%s: every condition inside its assertion" % rel,
        ["%s:%d: %s" % (rel, l, m) for l, m in got])
print("1..%d" % n)
sys.exit(1 if bad else 0)
PY
