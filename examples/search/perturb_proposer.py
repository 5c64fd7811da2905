#!/usr/bin/env python3
"""An outside proposer for `ndvm search --proposer`, with no language model in it.

It speaks the JSON-lines protocol of docs/search.md: it reads the task line, proposes a few
templates over the inputs, and each time ndvm sends the front it proposes variations of the
front's members (a term added, a factor added, an input swapped), starting from the fitted
values it was sent. A language-model proposer has the same shape: read the task and the front,
write programs.

Flags for testing the protocol's error handling:
  --malformed        also send lines that are not candidates, an unparseable program and a
                     runaway one
  --rounds N         exit cleanly after N fronts, once every line sent has its answer
  --crash-after N    exit with status 3 after N fronts
  --hang-after N     stop answering (sleep) after N fronts
  --log FILE         append every line received from ndvm to FILE
"""

import argparse
import json
import random
import sys
import time


SENT = [0]


def send(obj):
    SENT[0] += 1
    sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    sys.stdout.flush()


def templates(inputs):
    out = []
    for x in inputs:
        out += [
            f"(* a {x})",
            f"(+ a (* b {x}))",
            f"(* a (sin (* b {x})))",
            f"(* a (exp (* b {x})))",
        ]
    for i, x in enumerate(inputs):
        for y in inputs[i + 1:]:
            out.append(f"(+ a (* b {x} {y}))")
    return out


def fresh(params, base="p"):
    k = 0
    while f"{base}{k}" in params:
        k += 1
    return f"{base}{k}"


def variations(member, inputs, rng, n):
    src, params = member["src"], dict(member.get("params", {}))
    out = []
    for _ in range(n):
        z = fresh(params)
        x = rng.choice(inputs)
        kind = rng.randrange(4)
        if kind == 0:
            new = f"(+ {src} (* {z} {x}))"
        elif kind == 1:
            new = f"(* {src} (+ 1 (* {z} {x})))"
        elif kind == 2:
            new = f"(+ {src} (* {z} (sin {x})))"
        else:
            y = rng.choice(inputs)
            new = f"(+ {src} (* {z} {x} {y}))"
        init = dict(params)
        init[z] = 0.0
        out.append({"src": new, "init": init, "id": f"var-{rng.randrange(10**9)}"})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--malformed", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--crash-after", type=int, default=None)
    ap.add_argument("--hang-after", type=int, default=None)
    ap.add_argument("--per-round", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log", default=None)
    args = ap.parse_args()
    log = open(args.log, "a") if args.log else None
    rng = random.Random(args.seed)
    inputs = None
    rounds = 0
    answered = 0
    for line in sys.stdin:
        if log:
            log.write(line)
            log.flush()
        msg = json.loads(line)
        if "task" in msg:
            inputs = msg["task"]["inputs"]
            if args.malformed:
                send("this is not JSON")
                send({"id": "no-src", "init": {"a": 1.0}})
                send({"id": "unparseable", "src": "(+ a (* b " + inputs[0]})
                send({"id": "runaway", "src": "(loop ((i 0)) (recur (+ i a)))"})
            for k, src in enumerate(templates(inputs)):
                send({"src": src, "id": f"template-{k}"})
        elif "front" in msg:
            rounds += 1
            if args.crash_after is not None and rounds >= args.crash_after:
                sys.exit(3)
            if args.hang_after is not None and rounds >= args.hang_after:
                time.sleep(3600)
            if args.rounds is not None and rounds >= args.rounds:
                if answered >= SENT[0]:
                    return
                continue
            front = msg["front"]
            if not front:
                continue
            for c in variations(rng.choice(front), inputs, rng, args.per_round):
                send(c)
        else:
            # An answer to one line sent ({"id", "src", "params", ..., "error"}): no reply.
            answered += 1
            if args.rounds is not None and rounds >= args.rounds and answered >= SENT[0]:
                return


if __name__ == "__main__":
    main()
