#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate's files call downwards only: the per-accept path reads top
# to bottom (docs/DESIGN.md). From each built object of gates/accept/ (nm:
# the global symbols it defines and the ones it uses), a file calls another
# when it uses a symbol the other defines. Fails on any cycle among the
# files, a direct one (a.c <-> b.c) or one around a loop (a -> b -> c -> a),
# naming the files and the symbols of each edge; and on any .c or .h of
# gates/accept/ over 800 lines (the generated *.skel.h, bpftool's output,
# are not ours to split and are left out). First shows on a built example
# that the cycle check finds both shapes. No root needed.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is missing (scripts/deps.sh installs it)"; exit 0; }
command -v nm >/dev/null || { echo "1..0 # SKIP nm is missing (binutils)"; exit 0; }
exec env PYTHONPATH="$top_srcdir/tests" PYTHONDONTWRITEBYTECODE=1 python3 - "$top_srcdir" "$top_builddir" <<'PY'
import glob, os, re, subprocess, sys
from lint_tap import tap, skip, done

top, build = sys.argv[1], sys.argv[2]
MAX_LINES = 800


def edges(defs, uses):
    """file -> {file: [symbols]} from defined and used symbols per file."""
    owner = {}
    for f, syms in defs.items():
        for s in syms:
            owner[s] = f
    out = {f: {} for f in defs}
    for f, syms in uses.items():
        for s in sorted(syms):
            o = owner.get(s)
            if o and o != f:
                out[f].setdefault(o, []).append(s)
    return out


def cycles(g):
    """The strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, res, i = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = i[0]
        i[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                res.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return res


def describe(g, comp):
    return ['%s -> %s (%s)' % (a, b, ', '.join(g[a][b][:4]) + (' ...' if len(g[a][b]) > 4 else ''))
            for a in comp for b in sorted(g[a]) if b in comp]


# The checker on built examples: a direct cycle, one around a loop, a chain.
ex = edges({'a.c': ['fa'], 'b.c': ['fb'], 'c.c': ['fc'], 'd.c': ['fd']},
           {'a.c': ['fb'], 'b.c': ['fa', 'fc'], 'c.c': ['fd'], 'd.c': []})
tap(cycles(ex) == [['a.c', 'b.c']], 'the check finds a direct cycle (example)')
ex = edges({'a.c': ['fa'], 'b.c': ['fb'], 'c.c': ['fc']},
           {'a.c': ['fb'], 'b.c': ['fc'], 'c.c': ['fa']})
tap(cycles(ex) == [['a.c', 'b.c', 'c.c']], 'the check finds a cycle around a loop (example)')
ex = edges({'a.c': ['fa'], 'b.c': ['fb'], 'c.c': ['fc']},
           {'a.c': ['fb', 'fc'], 'b.c': ['fc'], 'c.c': []})
tap(cycles(ex) == [], 'the check passes a chain (example)')

# The gate's objects: libgateaccept.a's and vsd-gate's (automake names
# them PREFIX-FILE.o for per-target flags).
objs = sorted(glob.glob(os.path.join(build, 'gates/accept/*.o')))
objs = [o for o in objs if not o.endswith('.bpf.o')]
if not objs:
    skip('the calls between the gate\'s files', 'gates/accept/ is not built (make first)')
    done()
defs, uses = {}, {}
for o in objs:
    src = re.sub(r'^(lib)?[a-z_]+?-', '', os.path.basename(o))[:-2] + '.c'
    out = subprocess.run(['nm', '--defined-only', '-g', o], capture_output=True, text=True).stdout
    defs.setdefault(src, set()).update(l.split()[-1] for l in out.splitlines() if l.strip())
    out = subprocess.run(['nm', '-u', o], capture_output=True, text=True).stdout
    uses.setdefault(src, set()).update(l.split()[-1] for l in out.splitlines() if l.strip())
missing = [os.path.basename(s) for s in glob.glob(os.path.join(top, 'gates/accept/*.c'))
           if not s.endswith('.bpf.c') and os.path.basename(s) not in defs
           and os.path.basename(s) != 'fuzz-fcgi.c']
tap(not missing, 'every .c of gates/accept/ is built (fuzz-fcgi.c and *.bpf.c aside)',
    ['not built: ' + ', '.join(sorted(missing))] if missing else ())
g = edges(defs, uses)
cyc = cycles(g)
diag = []
for comp in cyc:
    diag.append('cycle: ' + ' '.join(comp))
    diag += ['  ' + d for d in describe(g, comp)]
tap(not cyc, 'no file of gates/accept/ calls into a file that calls back into it (%d files)'
    % len(g), diag)

big = []
for p in sorted(glob.glob(os.path.join(top, 'gates/accept/*.[ch]'))):
    if p.endswith('.skel.h'):
        continue
    with open(p, encoding='utf-8') as fp:
        lines = sum(1 for _ in fp)
    if lines > MAX_LINES:
        big.append('%s: %d lines' % (os.path.relpath(p, top), lines))
tap(not big, 'every .c and .h of gates/accept/ has at most %d lines (*.skel.h aside)' % MAX_LINES,
    big)
done()
PY
