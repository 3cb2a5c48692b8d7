#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every measured figure lives on one page: its benchmark's result page
# (benchmarks/results/*.md, generated from the CSV beside it). The README,
# the man pages, docs/*.md and the results index link to those pages; a
# figure of a results page that also appears in one of them is a copy that
# will go stale, and fails here. And each page's tables are what
# benchmarks/bench-report makes of the CSV beside it: run on a copy of the
# pages, it changes nothing (a table typed in, or a CSV replaced without
# `make bench-report`, fails).
#
# A figure is a decimal number, with its unit if it has one (0.97, 12.5%,
# 25.30 µs, 3.9 s): what a run measures; without a unit, only one with
# two decimals or more (6.1 and 0.8 are versions and round targets far more
# often than figures). Integers are left out (counts,
# sizes and settings such as "200 ms" or "1,000 VSs" are specifications
# more often than results), and so is a number that states a target or a
# limit (after "target", ">=", "<=", "≥", "≤", "at least", "at most",
# "within"), a share ("cpu 0.5%"), a load average, or a version (after
# "Linux", "kernel", "PHP", "-v").
# No root needed.
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 - "$srcdir" <<'EOF'
import difflib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

top = sys.argv[1]
NUM = re.compile(r'(?<![\w.,/-])(\d+\.\d+)(?![\w.]?\d)'
                 r'(?:\s?(µs|us|\\\(\*ms|ns|ms|s|%|microseconds|milliseconds|nanoseconds|'
                 r'seconds)(?![\w]))?')
UNIT = {'us': 'µs', '\\(*ms': 'µs', 'microseconds': 'µs', 'milliseconds': 'ms',
        'nanoseconds': 'ns', 'seconds': 's'}
SPEC = re.compile(r'(target\w*|>=|<=|≥|≤|at least|at most|within|±|linux|kernel|php|'
                  r'apache|debian|version|-v|[<>]|\\\(>=|\\\(<=|cpu|shares? of|load average)\W{0,3}$', re.I)


def figures(path):
    """(figure, line number) of each figure in a file."""
    out = []
    with open(path, encoding='utf-8') as fp:
        for no, line in enumerate(fp, 1):
            if line.startswith('<!--'):
                continue        # bench-report's block markers: specifications
            for m in NUM.finditer(line):
                if SPEC.search(line[max(0, m.start() - 14):m.start()]):
                    continue
                unit = UNIT.get(m.group(2), m.group(2) or '')
                if not unit and not re.fullmatch(r'\d+\.\d\d+', m.group(1)):
                    continue        # 6.1, 0.8: versions and round targets more often than figures
                if re.fullmatch(r'1\.0+', m.group(1)):
                    continue        # a baseline's ratio to itself
                out.append((m.group(1) + unit, no))
    return out


pages = sorted(glob.glob(os.path.join(top, 'benchmarks/results/*.md')))
home = {}
for p in pages:
    for fig, no in figures(p):
        home.setdefault(fig, '%s:%d' % (os.path.relpath(p, top), no))

others = [os.path.join(top, 'README.md'), os.path.join(top, 'benchmarks/RESULTS.md')]
others += sorted(glob.glob(os.path.join(top, 'man/*.[0-9]')))
others += sorted(glob.glob(os.path.join(top, 'docs/*.md')))
others = [p for p in others if os.path.exists(p)]

print('1..%d' % (len(others) + 2))
print('ok 1 - %d figures on %d result pages' % (len(home), len(pages))
      if home else 'not ok 1 - no figure found on the result pages')

with tempfile.TemporaryDirectory() as tmp:
    for p in glob.glob(os.path.join(top, 'benchmarks/results/*')):
        shutil.copy(p, tmp)
    copies = sorted(glob.glob(os.path.join(tmp, '*.md')))
    run = subprocess.run([sys.executable, os.path.join(top, 'benchmarks/bench-report')] + copies,
                         capture_output=True, text=True)
    diff = run.stderr.splitlines()
    for c in copies:
        with open(os.path.join(top, 'benchmarks/results', os.path.basename(c)), encoding='utf-8') as fp:
            was = fp.read().splitlines()
        with open(c, encoding='utf-8') as fp:
            now = fp.read().splitlines()
        diff += list(difflib.unified_diff(was, now, os.path.basename(c), 'bench-report', n=0, lineterm=''))
blocks = sum(open(p, encoding='utf-8').read().count('<!-- report ') for p in pages)
ok = run.returncode == 0 and not diff and blocks > 0
print('%s 2 - the %d generated tables on the result pages are what bench-report makes of their CSVs'
      % ('ok' if ok else 'not ok', blocks))
for d in diff[:40]:
    print('# ' + d)

for i, p in enumerate(others, 3):
    rel = os.path.relpath(p, top)
    dup = [(fig, no) for fig, no in figures(p) if fig in home]
    if dup:
        print('not ok %d - %s repeats no figure of a result page' % (i, rel))
        for fig, no in dup:
            print('# %s:%d: %s (on %s)' % (rel, no, fig, home[fig]))
    else:
        print('ok %d - %s repeats no figure of a result page' % (i, rel))
EOF
