#!/usr/bin/env python3
"""Same results: exit 0 if the JSON report NEW says what OLD says.

Usage: same-report.py OLD.json NEW.json

Every field of the old report must be in the new one with the same value (the
build-naming `schema_version` and `lamina_version` aside). A field only the new report
has must be null or 0: a later schema may add sections and counters that a run without
the feature leaves null or at 0, but may not change a number. Prints where the reports
differ on stderr and exits 1 if they do. Used by scripts/ref-compare.sh and
scripts/bench-instr.sh (python3, standard library only).
"""
import json
import sys

IGNORED = {"schema_version", "lamina_version"}


def same(a, b, path):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k in IGNORED:
                continue
            if k not in b or not same(a[k], b[k], path + "." + k):
                print("  differs at " + path + "." + k, file=sys.stderr)
                return False
        extra = [k for k in b if k not in a and k not in IGNORED and b[k] not in (None, 0)]
        if extra:
            print("  new non-null fields at " + path + ": " + ", ".join(extra), file=sys.stderr)
            return False
        return True
    return a == b


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: same-report.py OLD.json NEW.json")
    old, new = (json.load(open(p)) for p in sys.argv[1:3])
    sys.exit(0 if same(old, new, "") else 1)
