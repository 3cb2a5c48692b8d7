# SPDX-License-Identifier: GPL-2.0-or-later
"""TAP output for the Python checks of tests/lint-*.sh.

tap() prints one result, with its diagnostics; skip() one that could not
be checked, with why; done() prints the plan and exits non-zero if any
result failed. The plan comes last, so a check may skip after others ran.
"""
import sys

n = 0
failed = 0


def tap(ok, name, diag=(), todo=None):
    global n, failed
    n += 1
    print('%s %d - %s%s' % ('ok' if ok else 'not ok', n, name,
                            ' # TODO ' + todo if todo else ''))
    for d in diag:
        print('#   ' + d)
    if not ok and not todo:
        failed += 1


def skip(name, why):
    global n
    n += 1
    print('ok %d - %s # SKIP %s' % (n, name, why))


def done():
    print('1..%d' % n)
    sys.exit(1 if failed else 0)
