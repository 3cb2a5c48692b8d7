#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# No stale names: every path of the tree that the sources, scripts, build
# files, man pages and documents name (lib/..., gates/socket/records.bpf.c,
# tests/local.mk) exists. A file that moved or went leaves its old name in
# comments that then send the reader nowhere. A name without an extension
# (a built program, or a family such as tests/gate-unix-*.sh) needs a file
# that begins with it. Left out: the result pages (benchmarks/results/,
# records of runs of their day); placeholders in capitals
# (tests/rules/X.rules); what the build makes (objects, skeletons,
# vmlinux.h, a file from its .in, a file in the build tree of a build
# made out of the source tree); what runs make (tests/vm/results/, out/,
# debs/, only, reboot-requested); the installed /etc/vsd/. Shows first on
# built examples that it finds a stale name and passes real ones.
# And no work-log labels in the same files (an issue's number, #N): the tree
# speaks of the product, git of how it came to be. No root needed.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is missing (scripts/deps.sh installs it)"; exit 0; }
exec env PYTHONPATH="$top_srcdir/tests" PYTHONDONTWRITEBYTECODE=1 python3 - "$top_srcdir" "$top_builddir" <<'PY'
import os, re, sys
from lint_tap import tap, done

DIRS = ('lib', 'vsd', 'vsctl', 'gates', 'rules', 'tests', 'benchmarks', 'man', 'docs',
        'scripts', 'debian', 'etc', 'fcgi-demo')
TOP_FILES = ('README.md', 'configure.ac', 'Makefile.am', 'autogen.sh')
EXT = ('.c', '.h', '.sh', '.py', '.md', '.mk', '.am', '.ac', '.in', '.5', '.8')
PATH = re.compile(r'(?<![\w./$-])((?:%s)/[\w./-]*\w)' % '|'.join(DIRS))
RUNTIME = re.compile(r'^tests/vm/(results|out|debs|only|reboot-requested)(/|$)|^etc/vsd/')
GENERATED = ('Makefile.in', 'config.h.in', 'vmlinux.h')
LABEL = re.compile(r'\b[Ii]ssues? #?\d+\b|(?<![\w&#/{])#\d+\b')
top, build = sys.argv[1], sys.argv[2]


def stale(name):
    """1 if name, a path of the tree, names nothing there."""
    if RUNTIME.search(name) or re.search(r'(^|/)[A-Z]+(\.\w+)?$', name):
        return 0
    if re.search(r'(\.(o|a|skel\.h|log|trs)|/vmlinux\.h)$', name):
        return 0        # made by the build
    if os.path.exists(os.path.join(top, name)) or os.path.exists(os.path.join(top, name + '.in')):
        return 0
    if os.path.exists(os.path.join(build, name)):
        return 0        # made by the build, in a build tree of its own
    d, base = os.path.split(name)
    if '.' not in base and os.path.isdir(os.path.join(top, d)):
        return not any(f.startswith(base) for f in os.listdir(os.path.join(top, d)))
    return 1


def names(text):
    """(line, name) of each stale name in text."""
    out = []
    for no, line in enumerate(text.split('\n'), 1):
        for m in PATH.finditer(line):
            name = m.group(1).rstrip('.')
            if stale(name):
                out.append((no, name))
    return out


def sources():
    for f in TOP_FILES:
        yield f
    for d in DIRS:
        for root, dirs, files in os.walk(os.path.join(top, d)):
            rel = os.path.relpath(root, top)
            dirs[:] = sorted(x for x in dirs if not x.startswith('.') and
                             os.path.join(rel, x) not in ('benchmarks/results', 'tests/vm/results',
                                                          'tests/vm/out', 'tests/vm/debs'))
            for f in sorted(files):
                p = os.path.join(root, f)
                if f in GENERATED or f.endswith('.skel.h'):
                    continue
                if f.endswith(EXT):
                    yield os.path.join(rel, f)
                elif os.access(p, os.X_OK) and os.path.getsize(p) < 1 << 20:
                    with open(p, 'rb') as fp:
                        if fp.read(2) == b'#!':
                            yield os.path.join(rel, f)


ex = '# see issue %d (#%d); ${#2}, &#39;, a/#3\n' % (33, 12)    # no label in this file
tap([m.group(0) for m in LABEL.finditer(ex)] == ['issue %d' % 33, '#%d' % 12],
    'the check finds work-log labels, not shell lengths (example)')
gone = 'gates/accept/' + 'records.bpf.c'    # so that this file names no stale path
tap(names(' * accept records (%s): the maps\n' % gone) == [(1, gone)],
    'the check finds a stale name (example)')
tap(names(' * accept records (gates/socket/records.bpf.c), tests/gate-unix-*.sh,\n'
          ' * benchmarks/loadgen, tests/rules/X.rules, `etc/vsd/vsd.rules`\n') == [],
    'the check passes names of the tree, families, programs and placeholders (example)')
found, labels, n = [], [], 0
for rel in sources():
    try:
        with open(os.path.join(top, rel), encoding='utf-8') as fp:
            text = fp.read()
    except (OSError, UnicodeDecodeError):
        continue
    n += 1
    found += ['%s:%d: %s' % (rel, no, name) for no, name in names(text)]
    labels += ['%s:%d: %s' % (rel, text.count('\n', 0, m.start()) + 1, m.group(0))
               for m in LABEL.finditer(text)]
tap(n > 100 and not found, 'every path named in %d files exists' % n, found)
tap(n > 100 and not labels, 'no work-log label in %d files' % n, labels)
done()
PY
