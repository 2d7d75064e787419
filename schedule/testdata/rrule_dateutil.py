#!/usr/bin/env python3
"""Writes rrule_dateutil.json: random RFC 5545 rules and their first
occurrences as python-dateutil expands them, for TestRRuleMatchesDateutil.

The rules are drawn from what Tributary's RRULE takes (schedule/rrule_parse.go),
the draw seeded, so that the file changes only when this script does. Each
rule's occurrences are wall times (DTSTART is floating, as a schedule's is:
local to its zone), the first MAX_OCCURRENCES within HORIZON_YEARS of DTSTART.

Run it from the repository's root, with python-dateutil 2.9:

    python3 schedule/testdata/rrule_dateutil.py > schedule/testdata/rrule_dateutil.json
"""

import datetime
import json
import random
import signal
import sys

import dateutil
from dateutil.rrule import rrulestr

SEED = 20261128
RULES = 500
MAX_OCCURRENCES = 24
HORIZON_YEARS = 30

FREQS = ["YEARLY"] * 4 + ["MONTHLY"] * 5 + ["WEEKLY"] * 4 + ["DAILY"] * 3 + ["HOURLY"] * 2 + ["MINUTELY"] * 1 + ["SECONDLY"] * 1
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def some(rnd, values, most):
    return sorted(set(rnd.sample(values, rnd.randint(1, most))))


def signed(rnd, hi, most):
    out = set()
    for _ in range(rnd.randint(1, most)):
        n = rnd.randint(1, hi)
        out.add(-n if rnd.random() < 0.3 else n)
    return sorted(out)


def draw(rnd):
    freq = rnd.choice(FREQS)
    start = datetime.datetime(rnd.randint(2025, 2030), rnd.randint(1, 12), rnd.randint(1, 28),
                              rnd.randint(0, 23), rnd.choice([0, 0, 0, 15, 30, 45]), rnd.choice([0, 0, 0, 0, 30]))
    parts = ["FREQ=" + freq]
    if rnd.random() < 0.4:
        parts.append("INTERVAL=%d" % rnd.randint(2, 5))
    end = rnd.random()
    if end < 0.15:
        parts.append("COUNT=%d" % rnd.randint(1, 30))
    elif end < 0.25:
        until = start + datetime.timedelta(days=rnd.randint(1, 3 * 365))
        parts.append("UNTIL=" + until.strftime("%Y%m%dT%H%M%S"))
    by = []
    if rnd.random() < 0.35:
        by.append("BYMONTH=" + ",".join(str(m) for m in some(rnd, list(range(1, 13)), 4)))
    if freq == "YEARLY" and rnd.random() < 0.15:
        by.append("BYWEEKNO=" + ",".join(str(w) for w in signed(rnd, 53, 3)))
    if freq in ("YEARLY", "HOURLY", "MINUTELY", "SECONDLY") and rnd.random() < 0.15:
        by.append("BYYEARDAY=" + ",".join(str(d) for d in signed(rnd, 366, 3)))
    if freq != "WEEKLY" and rnd.random() < 0.3:
        by.append("BYMONTHDAY=" + ",".join(str(d) for d in signed(rnd, 31, 3)))
    if rnd.random() < 0.5:
        ordinals = freq in ("MONTHLY", "YEARLY") and not any(p.startswith("BYWEEKNO") for p in by)
        days = []
        for d in some(rnd, DAYS, 3):
            if ordinals and rnd.random() < 0.4:
                hi = 5 if freq == "MONTHLY" or any(p.startswith("BYMONTH=") for p in by) else 53
                n = rnd.randint(1, hi)
                days.append(("-" if rnd.random() < 0.3 else "") + str(n) + d)
            else:
                days.append(d)
        by.append("BYDAY=" + ",".join(days))
    if freq in ("YEARLY", "MONTHLY", "WEEKLY", "DAILY") and rnd.random() < 0.3:
        by.append("BYHOUR=" + ",".join(str(h) for h in some(rnd, list(range(24)), 3)))
    if freq in ("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY") and rnd.random() < 0.2:
        by.append("BYMINUTE=" + ",".join(str(m) for m in some(rnd, list(range(0, 60, 5)), 3)))
    if freq in ("MINUTELY", "SECONDLY") or rnd.random() < 0.1:
        # Keep the sub-minute rules' occurrences apart: a second's worth
        # of them would fill the file with one minute.
        if freq == "SECONDLY" or rnd.random() < 0.5:
            by.append("BYSECOND=" + ",".join(str(s) for s in some(rnd, list(range(0, 60, 10)), 2)))
    if freq == "SECONDLY":
        by.append("BYMINUTE=" + ",".join(str(m) for m in some(rnd, list(range(0, 60, 15)), 2)))
        by.append("BYHOUR=" + ",".join(str(h) for h in some(rnd, list(range(24)), 2)))
    if freq == "MINUTELY":
        by.append("BYHOUR=" + ",".join(str(h) for h in some(rnd, list(range(24)), 2)))
    if by and rnd.random() < 0.25:
        by.append("BYSETPOS=" + ",".join(str(p) for p in signed(rnd, 4, 2)))
    if rnd.random() < 0.2:
        by.append("WKST=" + rnd.choice(DAYS))
    parts += by
    return "DTSTART:" + start.strftime("%Y%m%dT%H%M%S") + "\nRRULE:" + ";".join(parts), start


class Slow(Exception):
    pass


def on_alarm(signum, frame):
    raise Slow()


def expand(text, start):
    horizon = start.replace(year=start.year + HORIZON_YEARS)
    out = []
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(1)
    try:
        for occurrence in rrulestr(text):
            if occurrence > horizon or len(out) == MAX_OCCURRENCES:
                break
            out.append(occurrence.strftime("%Y%m%dT%H%M%S"))
    finally:
        signal.alarm(0)
    return out


def main():
    rnd = random.Random(SEED)
    rules, seen = [], set()
    while len(rules) < RULES:
        text, start = draw(rnd)
        if text in seen:
            continue
        seen.add(text)
        try:
            occurrences = expand(text, start)
        except Slow:
            continue  # dateutil searched on for a second: a rule with few or none
        except ValueError:
            continue  # a rule dateutil refuses (a BY part its INTERVAL never reaches)
        if not occurrences:
            continue
        rules.append({"rule": text, "occurrences": occurrences})
    # One rule a line, so that a change of the script shows in a diff.
    head = json.dumps({"dateutil": dateutil.__version__, "seed": SEED, "horizon_years": HORIZON_YEARS,
                       "max_occurrences": MAX_OCCURRENCES})
    sys.stdout.write(head[:-1] + ', "rules": [\n')
    sys.stdout.write(",\n".join(json.dumps(r) for r in rules))
    sys.stdout.write("\n]}\n")


if __name__ == "__main__":
    main()
