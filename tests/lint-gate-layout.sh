#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# No file of the accept gate knows the cgroup layout: every .c and .h of
# gates/accept/ (the BPF programs, *.bpf.c, and generated *.skel.h aside)
# reaches a VS's cgroups through its handle (lib/cgroup-handle.h), which
# decides per layout. Fails on any file whose code (comments left out:
# they may say why) names a layout: the hierarchy kinds (CG_KIND_*), a
# layout flag or test (pure_v2, v2, cg_layout, CG_UNIFIED/HYBRID/LEGACY,
# cg_pure_v2), the layout's calls and descriptors (cg_move_fast,
# cg_usage_fast, cg_kind_key, fd_move), its files ("tasks", cgroup.procs,
# cgroup.threads, cgroup.type, cgroup.subtree_control, cpuacct, cpu.stat)
# or its mount (/sys/fs/cgroup). Shows first on built examples that a name
# in code is found and one in a comment is not. No root needed.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is missing (scripts/deps.sh installs it)"; exit 0; }
exec env PYTHONPATH="$top_srcdir/tests" PYTHONDONTWRITEBYTECODE=1 python3 - "$top_srcdir" <<'PY'
import glob, os, re, sys
from lint_tap import tap, skip, done

top = sys.argv[1]

LAYOUT = re.compile(r'''
      \bCG_KIND_\w*
    | \bpure_v2\b | \bv2\b
    | \bcg_layout\w* | \bCG_(?:UNIFIED|HYBRID|LEGACY)\b | \bcg_pure_v2\b
    | \bcg_move_fast\b | \bcg_usage_fast\b | \bcg_kind_key\b | \bfd_move\b
    | "tasks" | /tasks\b
    | \bcgroup\.(?:procs|threads|type|subtree_control)\b
    | cpuacct | \bcpu\.stat\b
    | /sys/fs/cgroup
''', re.X | re.I)

# A comment, or a string or character literal (kept: a file name is one).
TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def code(text):
    """text with each comment blanked out, its newlines kept."""
    def blank(m):
        s = m.group(0)
        return re.sub(r'[^\n]', ' ', s) if s.startswith('/') else s
    return TOKEN.sub(blank, text)


def names(text):
    """(line, what) for each layout name in text's code."""
    out = []
    for i, line in enumerate(code(text).split('\n'), 1):
        for m in LAYOUT.finditer(line):
            out.append((i, m.group(0)))
    return out


# The check on built examples.
ex = 'int f(struct gate_vs *v)\n{\n\treturn cg_writeat(fd, "cgroup.procs", s);\n}\n'
tap(names(ex) == [(3, 'cgroup.procs')], 'the check finds a layout file named in code (example)')
ex = 'if (g->tab.pure_v2)\n\tr = v->dir[CG_KIND_UNIFIED] != NULL;\n'
tap([w for _, w in names(ex)] == ['pure_v2', 'CG_KIND_UNIFIED'],
    'the check finds a layout flag and a hierarchy kind (example)')
ex = ('/* a move writes "tasks" on v1, cgroup.procs on v2 */\n'
      '// cpuacct.usage or cpu.stat\nr = cgh_move(&v->cg, tid, tgid); /* fd_moved */\n'
      'n = fp->fd_moved; s = "/* not a comment: v2 */";\n')
tap([w for _, w in names(ex)] == ['v2'],
    'comments are left out, and only a whole name counts (example)')

files = sorted(p for p in glob.glob(os.path.join(top, 'gates/accept/*.[ch]'))
               if not p.endswith('.bpf.c') and not p.endswith('.skel.h'))
if not files:
    skip('no file of gates/accept/ names a cgroup layout', 'no gates/accept/ sources under %s' % top)
    done()
found = []
for p in files:
    with open(p, encoding='utf-8') as fp:
        for line, what in names(fp.read()):
            found.append('%s:%d: %s' % (os.path.relpath(p, top), line, what))
tap(not found, 'no file of gates/accept/ names a cgroup layout (%d files; '
    'lib/cgroup-handle.h decides)' % len(files), found)
done()
PY
