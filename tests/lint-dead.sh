#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# No dead code in the product: every global function that the objects of
# vsd/, vsctl/, lib/, gates/ and rules/ define (nm --defined-only) is used
# by one of them, or by a benchmark (the tree's own tools, which link the
# same libraries): an undefined symbol of another object (nm -u), or a
# use in its own file (a relocation, objdump -r, or, where the compiler
# bound or inlined the call itself, the name in its source's code, comments
# left out, other than at its definition). A function
# that only the tests call is test code, and lives with them. The fuzzers'
# objects, and the objects automake builds from a product source for a test
# (tests_*), do not count as users. Shows first on a built example that
# the check finds an unused function. No root needed.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is missing (scripts/deps.sh installs it)"; exit 0; }
command -v nm >/dev/null && command -v objdump >/dev/null ||
	{ echo "1..0 # SKIP nm or objdump is missing (binutils)"; exit 0; }
exec env PYTHONPATH="$top_srcdir/tests" PYTHONDONTWRITEBYTECODE=1 python3 - "$top_srcdir" "$top_builddir" <<'PY'
import glob, os, re, subprocess, sys
from lint_tap import tap, skip, done

top, build = sys.argv[1], sys.argv[2]
PRODUCT = ('vsd', 'vsctl', 'lib', 'gates', 'rules')
# Kept on purpose, each with its reason.
KEPT = {
    'cgh_assume_layout': 'the seam through which test-cgroup-handle.c runs the '
                         'handle as on both layouts on one host',
}


def objects(dirs):
    out = []
    for d in dirs:
        for o in glob.glob(os.path.join(build, d, '**', '*.o'), recursive=True):
            base = os.path.basename(o)
            if base.endswith('.bpf.o') or 'fuzz' in base or base.startswith('tests_'):
                continue
            out.append(o)
    return sorted(out)


def symbols(o, *args):
    r = subprocess.run(['nm'] + list(args) + [o], capture_output=True, text=True).stdout
    return [l.split() for l in r.splitlines() if l.strip()]


# A comment, or a string or character literal (blanked: a name in them is no use).
TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def source_uses(obj):
    """The names the code of obj's source uses: named other than where it
    is defined (NAME( at the start of a line) or declared (a prototype)."""
    d = os.path.relpath(os.path.dirname(obj), build)
    base = os.path.basename(obj)[:-2]
    while True:     # automake names per-target objects PREFIX-FILE.o
        src = os.path.join(top, d, base + '.c')
        if os.path.exists(src) or '-' not in base:
            break
        base = base.split('-', 1)[1]
    if not os.path.exists(src):
        return set()
    with open(src, encoding='utf-8') as fp:
        code = TOKEN.sub(' ', fp.read())
    uses = set()
    for line in code.split('\n'):
        if re.match(r'\w', line) and re.search(r'\)\s*;\s*$', line):
            continue        # a prototype
        line = re.sub(r'^[A-Za-z_]\w*\(', '(', line)     # a definition
        uses.update(re.findall(r'\b[A-Za-z_]\w*', line))
    return uses


def dead(defs, used, self_refs):
    """{symbol: object} of the functions defs names that nobody uses."""
    return {s: o for s, o in defs.items() if s not in used and s not in self_refs.get(o, ())}


# The check on a built example: one function used elsewhere, one by itself, one by nobody.
ex = dead({'f': 'a.o', 'g': 'a.o', 'h': 'b.o'}, {'f'}, {'a.o': {'g'}})
tap(ex == {'h': 'b.o'}, 'the check finds a function nothing uses (example)')

prod = objects(PRODUCT)
if not prod:
    skip('every function of the product is used', 'the product is not built (make first)')
    done()
defs, used, self_refs = {}, set(), {}
for o in prod:
    for f in symbols(o, '--defined-only', '-g'):
        if len(f) == 3 and f[1] == 'T' and f[2] != 'main':
            defs[f[2]] = os.path.relpath(o, build)
    relocs = subprocess.run(['objdump', '-r', o], capture_output=True, text=True).stdout
    self_refs[os.path.relpath(o, build)] = source_uses(o) | {
        l.split()[2].split('-')[0].split('+')[0] for l in relocs.splitlines()
        if len(l.split()) == 3 and l[0] in '0123456789abcdef'}
for o in prod + objects(('benchmarks',)):
    used.update(f[-1] for f in symbols(o, '-u'))
found = dead(defs, used, self_refs)
kept = sorted(s for s in found if s in KEPT)
bad = sorted(s for s in found if s not in KEPT)
tap(len(defs) > 100 and not bad,
    'every function of the product (%d in %d objects) is used by it or a benchmark' % (len(defs), len(prod)),
    ['%s: %s, used by nothing of the product' % (found[s], s) for s in bad] +
    ['kept: %s (%s)' % (s, KEPT[s]) for s in kept])
done()
PY
