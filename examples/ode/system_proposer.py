#!/usr/bin/env python3
"""An outside proposer of systems for `ndvm search --time ... --proposer`, with no language
model in it.

It speaks the JSON-lines protocol of docs/ode.md: it reads the task line (the states and what
a right-hand side may read), proposes a few polynomial systems, and each time ndvm sends the
front it proposes variations of the front's members (a term added to one state's right-hand
side, one state's right-hand side copied into another's), starting from the fitted values it
was sent. A language-model proposer has the same shape: read the task and the front, write
systems.

Flags:
  --malformed        also send lines that are no systems (not JSON, a state missing, a program
                     that does not parse) and a system that blows up
  --rounds N         exit cleanly after N fronts, once every line sent has its answer
  --log FILE         append every line received from ndvm to FILE
"""

import argparse
import json
import random
import sys


SENT = [0]


def send(obj):
    SENT[0] += 1
    sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    sys.stdout.flush()


def first_systems(states, reads):
    """Every state's right-hand side linear in what it reads, then quadratic in the states;
    the constants start at 0 (the fit starts from a system at rest)."""
    lin = " ".join(f"(* b{j} {x})" for j, x in enumerate(reads))
    quad = " ".join(f"(* q{i}{j} {x} {y})" for i, x in enumerate(states) for j, y in enumerate(states) if i <= j)
    zero = {}
    for name in ["a"] + [f"b{j}" for j in range(len(reads))]:
        zero[name] = 0.0
    for i in range(len(states)):
        for j in range(i, len(states)):
            zero[f"q{i}{j}"] = 0.0
    return [
        {"src": {s: f"(+ a {lin})" for s in states}, "init": zero},
        {"src": {s: f"(+ a {lin} {quad})" for s in states}, "init": zero},
    ]


def fresh(params, base="p"):
    k = 0
    while f"{base}{k}" in params:
        k += 1
    return f"{base}{k}"


def variations(member, states, reads, rng, n):
    eqs = member["equations"]
    params = dict(member.get("params", {}))
    out = []
    for _ in range(n):
        src = {s: eqs[s]["src"] for s in states}
        s = rng.choice(states)
        if len(states) > 1 and rng.random() < 0.3:
            other = rng.choice([x for x in states if x != s])
            src[s] = src[other]
        else:
            p = fresh(params)
            x, y = rng.choice(reads), rng.choice(reads)
            term = rng.choice([f"(* {p} {x})", f"(* {p} {x} {y})", f"(* {p} (sin {x}))"])
            src[s] = f"(+ {src[s]} {term})"
        out.append({"src": src, "init": {**params}})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--malformed", action="store_true")
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--log", default="")
    args = ap.parse_args()
    rng = random.Random(7)
    log = open(args.log, "a") if args.log else None

    def receive():
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        if log:
            log.write(line)
            log.flush()
        return json.loads(line)

    task = receive()["task"]
    states, reads = task["states"], task["reads"]
    for k, system in enumerate(first_systems(states, reads)):
        send({**system, "id": f"first-{k}"})
    if args.malformed:
        send("this is not JSON")
        send({"src": {states[0]: "x"}, "id": "missing-state"})
        send({"src": {s: "(+ a" for s in states}, "id": "unparseable"})
        send({"src": {s: f"(* 50 {s} {s})" for s in states}, "id": "blows-up"})
    answers, fronts = 0, 0
    while True:
        msg = receive()
        if "front" in msg:
            fronts += 1
            if args.rounds and fronts >= args.rounds and answers >= SENT[0]:
                return
            front = msg["front"]
            if front and not (args.rounds and fronts >= args.rounds):
                best = min(front, key=lambda m: m["train_loss"])
                for v in variations(best, states, reads, rng, 4):
                    v["id"] = f"variation-{fronts}-{SENT[0]}"
                    send(v)
        else:
            answers += 1
            if args.rounds and fronts >= args.rounds and answers >= SENT[0]:
                return


if __name__ == "__main__":
    main()
