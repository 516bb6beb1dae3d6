#!/usr/bin/env python3
"""Where a warm turn's CPU goes: reads `perf script` output of bench/e2e's -perf recording (the
turns alone) on stdin and prints each part's share of the samples.

    go run ./bench/e2e -bin OLD,NEW -only turn -perf /tmp/turn.perf
    perf script -i /tmp/turn.perf.2 | python3 bench/perf_turn.py

A sample counts once: in the sysmon or GC-worker part when its stack holds one of them, otherwise
in the part of its innermost frame that names a part, and in stack growth, the scheduler or
allocation only when no frame does (a sample of mallocgc under the transcript's write is the
transcript's)."""
import collections
import re
import sys

WHOLE_STACK = [
    ("GC (mark workers, sweep, assists)", r"runtime\.(gcBgMarkWorker|bgsweep|bgscavenge|gcAssistAlloc|gcDrain|markroot|scanobject|gcStart|sweepone)"),
    ("sysmon", r"runtime\.sysmon"),
]
PARTS = [
    ("read_file tool", r"agentd/tools\.|agentd/workspace\."),
    ("transcript (record, marshal, write)", r"session\.\(\*sessionFile\)|session\.\(\*Session\)\.record|session\.\(\*store\)"),
    ("checkpoint", r"session\.\(\*turn\)\.(startCheckpoint|endCheckpoint|save)|checkpoint"),
    ("SSE read + decode", r"providers/httpsse\.\(\*Stream\)\.Events|providers/openai\.\(\*Provider\)\.decode|providers/openai\.\(\*decoder\)|httpsse\.\(\*idleBody\)|httpsse\.\(\*sseReader\)"),
    ("HTTP client (net/http, conn loops, request write)", r"net/http\.|providers/httpsse\.|net\.\(\*netFD\)|net\.\(\*conn\)"),
    ("model request building (JSON)", r"providers/openai\.|agentd/providers\."),
    ("JSON-RPC out (notifications, answers)", r"jsonrpc\.|protocol\.|editorbridge\."),
    ("JSON-RPC in (read, decode, dispatch)", r"go\.lsp\.dev/jsonrpc2|rpc\.\(\*Server\)\.handle|rpc\.\(\*acp|rpc/acp"),
    ("system prompt, live context, instructions", r"liveContext|refreshInstructions|systemPrompt|instructionCandidates|agentd/prompts\.|\(\*turn\)\.specs|\(\*Session\)\.toolset"),
    ("title request", r"makeTitle"),
    ("session: other (turn loop, stream, assembly)", r"agentd/session\."),
]
LAST = [
    ("stack growth (morestack)", r"runtime\.(newstack|morestack|copystack)"),
    ("scheduler (park, wake, findRunnable, futex)", r"runtime\.(schedule|findRunnable|park_m|stopm|startm|wakep|notewakeup|notesleep|futex|ready|goready|mcall|gosched|exitsyscall|entersyscall|netpoll|mstart)"),
    ("allocation (mallocgc, not GC)", r"runtime\.(mallocgc|newobject|growslice|makeslice)"),
]
WHOLE_STACK, PARTS, LAST = ([(n, re.compile(p)) for n, p in rules] for rules in (WHOLE_STACK, PARTS, LAST))


def part(frames):
    for name, p in WHOLE_STACK:
        if any(p.search(f) for f in frames):
            return name
    for rules in (PARTS, LAST):
        for f in frames:  # innermost first
            for name, p in rules:
                if p.search(f):
                    return name
    return "other"


def samples(lines):
    frames = []
    for line in lines:
        if line.strip() and line[0] in " \t":
            fields = line.strip().split(" ", 1)
            if len(fields) == 2:
                frames.append(fields[1])
            continue
        if frames:
            yield frames
        frames = []
    if frames:
        yield frames


counts = collections.Counter(part(s) for s in samples(sys.stdin))
total = sum(counts.values()) or 1
for name, n in counts.most_common():
    print(f"{100 * n / total:5.1f} %  {name}")
print(f"{total} samples")
