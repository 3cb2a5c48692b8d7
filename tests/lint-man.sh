#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The man pages are the reference, so they must name what the code accepts:
# every command in vsctl's table (vsctl/vsctl.c) in vsctl(8), every long
# option of vsd (vsd/vsd.c) in vsd(8), and every keyword of the rule
# grammar (the parser's tables and comparisons in rules/) in vsrules(5),
# each as a macro argument (Cm, Fl or Ic), not merely as a word of prose.
# And each page stays a reference: vsd.8 at most 600 lines, the others 500.
# No root needed.
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
exec env PYTHONPATH="$srcdir/tests" PYTHONDONTWRITEBYTECODE=1 python3 - "$srcdir" <<'PY'
import glob
import os
import re
import sys
from lint_tap import tap, done

top = sys.argv[1]


def read(rel):
    with open(os.path.join(top, rel), encoding='utf-8') as fp:
        return fp.read()


def macro_args(page, macros):
    """The words given as arguments to MACROS anywhere in an mdoc page."""
    words = set()
    for line in read(page).splitlines():
        if not line.startswith('.') or line.startswith('.\\"'):
            continue
        cur = None
        for tok in line[1:].split():
            if re.fullmatch(r'[A-Z][a-z][a-z]?', tok):
                cur = tok
                continue
            if cur in macros:
                words.add(tok.strip('"').replace('\\&', ''))
    return words


def documented(what, names, page, macros):
    have = macro_args(page, macros)
    missing = sorted(set(names) - have)
    tap(names and not missing,
        '%s: all %d in %s' % (what, len(set(names)), page),
        ['not documented: ' + ' '.join(missing)] if missing else
        ['none found in the source'] if not names else [])


# vsctl's commands: its table cmds[] of { "name", do_... }
cmds = re.findall(r'^\s*\{ "([a-z-]+)", do_\w+', read('vsctl/vsctl.c'), re.M)
documented('vsctl commands', cmds, 'man/vsctl.8', {'Cm'})

# vsd's long options: its struct option table
opts = re.findall(r'\{ "([a-z-]+)", (?:no|required|optional)_argument',
                  read('vsd/vsd.c'))
documented('vsd long options', ['-' + o for o in opts], 'man/vsd.8', {'Fl'})

# the rule grammar's keywords: the settings table, the words the parser
# compares tokens with, and the names of gates and targets
kw = set()
for f in glob.glob(os.path.join(top, 'rules/parse*.c')) + \
        [os.path.join(top, 'rules/words.c')]:
    src = open(f, encoding='utf-8').read()
    kw |= set(re.findall(r'^\s*\{ "([a-z-]+)",\s*K_\w+', src, re.M))
    kw |= set(re.findall(r'strcmp\(\w+->text, "([a-z-]+)"\)', src))
    kw |= set(re.findall(r'\[RULES_\w+\] = "([a-z-]+)"', src))
documented('rule keywords', sorted(kw), 'man/vsrules.5', {'Ic', 'Cm'})

# line limits: a reference page, not a design document
for page in sorted(glob.glob(os.path.join(top, 'man/*.[0-9]'))):
    rel = os.path.relpath(page, top)
    limit = 600 if os.path.basename(page) == 'vsd.8' else 500
    lines = read(rel).count('\n')
    tap(lines <= limit, '%s has %d lines, at most %d' % (rel, lines, limit))

done()
PY
