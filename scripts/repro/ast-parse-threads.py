# The smallest program that shows why scripts/fuzz-api runs Schemathesis with one worker.
# CPython 3.11 before the fix of gh-106905 (python/cpython) keeps the AST converter's recursion
# depth in per-interpreter state: when a garbage collection inside one thread's ast.parse runs a
# finalizer that lets another thread parse, both move the same counter and ast.parse raises
# "SystemError: AST constructor recursion depth mismatch". Hypothesis calls ast.parse to describe
# lambdas, so two fuzzing workers (threads) hit it now and then. Prints the errors it saw; on
# the machine's Python 3.11.7 it printed one within 3,000 parses per thread.
#
#   python3 scripts/repro/ast-parse-threads.py
import ast
import gc
import sys
import threading
import time

gc.set_threshold(50, 1, 1)


class Cycle:
    def __del__(self):
        time.sleep(0)  # gives the GIL away from inside a collection


SOURCE = ("x = " + "[" * 30 + "1" + "]" * 30 + "\n") * 20
errors = []


def parse_many():
    for _ in range(3000):
        a, b = Cycle(), Cycle()
        a.other, b.other = b, a
        try:
            ast.parse(SOURCE)
        except SystemError as e:
            errors.append(str(e))
            return


threads = [threading.Thread(target=parse_many) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sys.version.split()[0], "SystemErrors:", len(errors), errors[:1])
