#!/usr/bin/env python3
# Interleaved validation of wsched simulate, learning included: for each
# demo configuration and repetition, record it at 1 and at 2 workers back
# to back (the order alternating), then let each trace predict the other.
# The learning configurations' traces say learn_heavy=true, so their
# replays learn; the "cross" rows replay a trace recorded without
# learning under -policy learn_heavy=true and predict the run that
# learned (a -> a+learn, b -> b+learn, e -> e+learn). Reports per
# configuration, stage and direction the median error over the
# repetitions.
import subprocess, re, statistics, sys, os, collections
W = sys.argv[1]            # wsched binary
OUT = sys.argv[2]          # directory
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 7
CYC = "5"
cfgs = ["a", "b", "c", "d", "e", "a+learn", "b+learn", "e+learn",
        "all/one/fifo", "searcher/half", "n/half", "one/batch:8"]
def trace(pol):
    if "/" in pol:
        return "gcmark-" + pol.replace("/", "-").replace(":", "") + ".pftrace"
    return "prepare-" + pol + ".pftrace"
row = re.compile(r'\s+(Prepare|Closure|Release)\s+(\S+)\s+(\S+)\s+(\S+)%\s+(\S+)\s+(\S+)\s+(\S+)%\s+(\S+)\s+(\S+)\s+(\S+)%')
errs = collections.defaultdict(list)
log = open(os.path.join(OUT, "pairs.txt"), "w")
def against(rep, label, dirn, src, dst, extra=()):
    o = subprocess.run([W, "simulate", *extra, "-against", dst, src], check=True, capture_output=True, text=True).stdout
    for l in o.splitlines():
        m = row.match(l)
        if m:
            g = m.groups()
            errs[(label, g[0], dirn)].append((float(g[3]), float(g[9])))
            print(rep, label, dirn, l.strip(), file=log)
for rep in range(REPS):
    d = {}
    for pol in cfgs:
        order = (1, 2) if rep % 2 == 0 else (2, 1)
        for w in order:
            d[pol, w] = os.path.join(OUT, f"r{rep}-w{w}", trace(pol))
            subprocess.run(["flock", "/tmp/cpu.lock", W, "demo", "-workers", str(w), "-cycles", CYC,
                            "-policy", pol, "-out", os.path.dirname(d[pol, w])], check=True, capture_output=True)
        for src, dst in ((1, 2), (2, 1)):
            against(rep, pol, f"{src}->{dst}", d[pol, src], d[pol, dst])
    for pol in ("a", "b", "e"):
        for src, dst in ((1, 2), (2, 2)):
            against(rep, pol + " learns", f"{src}->{dst}", d[pol, src], d[pol + "+learn", dst], ("-policy", "learn_heavy=true"))
    log.flush()
summ = open(os.path.join(OUT, "summary.txt"), "w")
def out(*a):
    print(*a); print(*a, file=summ)
out(f"median over {REPS} back-to-back pairs of each stage's makespan error (ratio error), %; {CYC} cycles a recording")
for dirn in ("1->2", "2->1", "2->2"):
    meds = []
    for (name, st, dd), v in sorted(errs.items()):
        if dd != dirn: continue
        me = statistics.median(x[0] for x in v); mr = statistics.median(x[1] for x in v)
        meds.append(me)
        out(f"{dirn} {name:16s} {st:8s} makespan {me:+6.1f}  ratio {mr:+6.1f}  (n={len(v)})")
    a = [abs(x) for x in meds]
    if a:
        out(f"{dirn}: median |error| of the stage medians {statistics.median(a):.1f}%, {sum(x<=10 for x in a)} of {len(a)} within 10%")
