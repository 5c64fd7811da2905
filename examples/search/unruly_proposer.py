#!/usr/bin/env python3
"""An outside proposer for `ndvm search --proposer` that misbehaves on purpose.

It speaks the JSON-lines protocol of docs/search.md, and is what the reliability tests and the
soak run (REPRODUCE.md) drive the search with:

  --lines FILE     send FILE's lines one at a time, each after the answer to the one before
                   (so each comes in a batch of its own), then exit once the last is answered
  --flood N        send N candidate lines of about 4 KB at once, as fast as the pipe takes them,
                   then exit without waiting for answers
  --soak           until stopped: good programs mixed with every bad kind the search must
                   survive (quote chains past the nesting limit, deep nesting, a huge matmul,
                   lines over the length cap, a line of megabytes without a newline, bytes that
                   are not UTF-8, lines that are no JSON, runaway loops, bursts of many lines),
                   reading the answers as they come
  --seed S         the soak's random seed
  --log FILE       append every line received from ndvm to FILE
"""

import argparse
import json
import os
import random
import re
import sys
import threading


def out(data):
    """Writes bytes or a line to ndvm, and flushes."""
    if isinstance(data, str):
        data = (data + "\n").encode()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def candidate(src, init=None, id=None):
    line = {"src": src}
    if init is not None:
        line["init"] = init
    if id is not None:
        line["id"] = id
    return json.dumps(line)


class Answers:
    """Reads ndvm's lines on a thread of its own, so that writing never waits on reading."""

    def __init__(self, log):
        self.count = 0
        self.task = None
        self.cond = threading.Condition()
        self.log = open(log, "a") if log else None
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for raw in sys.stdin:
            if self.log:
                self.log.write(raw)
                self.log.flush()
            msg = json.loads(raw)
            with self.cond:
                if "task" in msg:
                    self.task = msg["task"]
                elif "front" not in msg:
                    self.count += 1
                self.cond.notify_all()
        with self.cond:
            self.count = float("inf")
            self.cond.notify_all()

    def wait(self, n):
        with self.cond:
            self.cond.wait_for(lambda: self.count >= n)

    def wait_task(self):
        with self.cond:
            self.cond.wait_for(lambda: self.task is not None or self.count == float("inf"))
            return self.task


def bad_lines(rng, x):
    """One of each kind of line a search must answer, or count, and survive."""
    deep = 12_000
    return [
        candidate("'" * 30_000 + "x", id="quote-chain"),
        candidate("(+ a " + "(sin " * deep + x + ")" * deep + ")", id="too-deep"),
        candidate("(+ a (vsum (matmul (ones 2000 2000) (ones 2000 2000))))", id="huge-matmul"),
        candidate(f"(+ a (loop ((i 0)) (if (< i -1) i (recur (+ i 1)))))", id="runaway"),
        candidate("(+ a (ref (vec 1 2) 1e18))", id="huge-index"),
        "this is not JSON",
        json.dumps({"init": {"a": 1}, "id": "no-src"}),
        candidate("(+ a", id="unparseable"),
        candidate("(* a " + x + ")", init={"a": "one"}, id="bad-init"),
        candidate("(* a " + x + " " + " ".join(["b"] * 1000) + ")", id="long"),
        json.dumps({"src": "(* a " + x + ")", "pad": "z" * (2 << 20)}),
        b"\xff\xfe not UTF-8 \x80\n",
    ]


def good_lines(rng, inputs):
    x = rng.choice(inputs)
    y = rng.choice(inputs)
    forms = [
        f"(* a {x})",
        f"(+ a (* b {x}))",
        f"(* a (sin (* b {x})))",
        f"(+ (* a {x} {y}) b)",
        f"(* a (exp (* b {y})))",
    ]
    src = rng.choice(forms)
    init = {p: rng.uniform(-3, 3) for p in ("a", "b") if re.search(rf"\b{p}\b", src)}
    return candidate(src, init=init or None, id=f"good-{rng.randrange(1 << 30)}")


def soak(answers, rng):
    task = answers.wait_task()
    if task is None:
        return
    inputs = task["inputs"]
    sent = 0
    while True:
        roll = rng.random()
        if roll < 0.6:
            out(good_lines(rng, inputs))
            sent += 1
        elif roll < 0.9:
            line = rng.choice(bad_lines(rng, inputs[0]))
            out(line)
            sent += 1
        elif roll < 0.97:
            # A burst: many lines at once.
            for _ in range(rng.randrange(100, 2000)):
                out(good_lines(rng, inputs))
                sent += 1
        else:
            # Megabytes without a newline, then the newline.
            chunk = b"x" * (1 << 20)
            for _ in range(rng.randrange(2, 8)):
                out(chunk)
            out(b"\n")
            sent += 1
        # Stay at most a few hundred lines ahead of the answers, as a proposer that reads
        # its answers does; the bursts above go past it.
        answers.wait(max(0, sent - 500))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines")
    ap.add_argument("--flood", type=int)
    ap.add_argument("--soak", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log")
    args = ap.parse_args()
    answers = Answers(args.log)
    if args.lines:
        with open(args.lines, "rb") as f:
            lines = [l.rstrip(b"\n") for l in f if l.strip()]
        answers.wait_task()
        for k, line in enumerate(lines):
            out(line + b"\n")
            answers.wait(k + 1)
        return
    if args.flood:
        task = answers.wait_task()
        x = task["inputs"][0]
        pad = " " * 4000
        for k in range(args.flood):
            out(candidate(f"(* a {x}){pad}", id=f"flood-{k}"))
        return
    if args.soak:
        soak(answers, random.Random(args.seed))


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            pass
        os._exit(0)
