# anonmap.py: a gdb script (gdb -p PID -batch -ex "source anonmap.py") that says what each
# resident anonymous page of an idle Go process holds, from the runtime's own structures:
# heap-arena pages by span (size class and scan/noscan, stack, free), every goroutine's and every
# M's (g0, gsignal) stack, the mcentral spanSet blocks, the persistentalloc chunks, and the other
# anonymous mappings. Needs a binary with DWARF (go build's default) and root (pagemap).
# Layout assumptions: linux/amd64 (arenaBaseOffset 0xffff800000000000, 64 MB arenas, one L1 entry).
import gdb, struct, collections

pid = gdb.selected_inferior().pid


def pages(lo, hi):
    """Addresses of the resident 4 KB pages in [lo, hi)."""
    lo &= ~4095
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek(lo // 4096 * 8)
        data = f.read((hi - lo + 4095) // 4096 * 8)
    return [lo + i * 4096 for i in range(len(data) // 8)
            if struct.unpack_from("<Q", data, i * 8)[0] >> 63]


def ev(s):
    return gdb.parse_and_eval(s)


def kb(n):
    return "%5dK" % (n * 4)


maps = []
for line in open(f"/proc/{pid}/maps"):
    p = line.split()
    lo, hi = (int(x, 16) for x in p[0].split("-"))
    maps.append((lo, hi, p[1], p[5] if len(p) > 5 else ""))

arenas = ev("'runtime.mheap_'")["arenas"][0].dereference()
heap = collections.Counter()
other = []
for lo, hi, perm, name in maps:
    if name or "w" not in perm:
        continue
    res = pages(lo, hi)
    if not res:
        continue
    idx = (lo + 0x800000000000) >> 26
    ha = arenas[idx] if idx < (1 << 22) else None
    if ha is None or int(ha) == 0:
        other.append((len(res), lo, hi))
        continue
    base = (idx << 26) - 0x800000000000
    for a in res:
        sp = ha.dereference()["spans"][(a - base) // 8192]
        if int(sp) == 0:
            heap["no span"] += 1
            continue
        s = sp.dereference()
        state = int(s["state"]["s"]["value"])
        if state == 2:
            heap["stacks"] += 1
        elif state == 1:
            sc = int(s["spanclass"])
            heap["objects %d%s" % (int(s["elemsize"]), " noscan" if sc & 1 else "")] += 1
        else:
            heap["free"] += 1

objs = sum(v for k, v in heap.items() if k.startswith("objects"))
print("heap arena: objects %s in %d spans classes, stacks %s, free %s" % (
    kb(objs), sum(1 for k in heap if k.startswith("objects")), kb(heap["stacks"]), kb(heap["free"])))
for k, v in sorted(heap.items(), key=lambda kv: -kv[1]):
    if k.startswith("objects") and v >= 3:
        print("  %s %s" % (kb(v), k))

print("live stacks (goroutines, then each M's g0 and gsignal):")
live = 0
allgs = ev("'runtime.allgs'")
for i in range(int(allgs["len"])):
    g = allgs["array"][i].dereference()
    lo, hi = int(g["stack"]["lo"]), int(g["stack"]["hi"])
    if hi == 0:
        continue
    r = len(pages(lo, hi)) if hi - lo >= 4096 else 0
    live += r
    if hi - lo > 2048:
        try:
            start = gdb.execute("info symbol 0x%x" % int(g["startpc"]), to_string=True).split(" in ")[0]
        except gdb.error:
            start = "?"
        print("  g%-4d %6d B stack, %s resident, %s" % (int(g["goid"]), hi - lo, kb(r).strip(), start))
m = ev("'runtime.allm'")
nm = 0
while int(m):
    mm = m.dereference()
    nm += 1
    for which in ("g0", "gsignal"):
        if int(mm[which]) == 0:
            continue
        g = mm[which].dereference()
        lo, hi = int(g["stack"]["lo"]), int(g["stack"]["hi"])
        r = len(pages(lo, hi))
        live += r
        print("  m%-3d %-7s %6d B stack, %s resident" % (int(mm["id"]), which, hi - lo, kb(r).strip()))
    m = mm["alllink"]
print("  live stacks %s of %s in stack spans; %d Ms" % (kb(live), kb(heap["stacks"]), nm))

blocks = classes = 0
central = ev("'runtime.mheap_'")["central"]
for i in range(136):
    mc = central[i]["mcentral"]
    n = sum(int(mc[f][j]["spineLen"]["value"]) for f in ("partial", "full") for j in range(2))
    blocks += n
    classes += n > 0
print("mcentral spanSet blocks: %d in %d span classes (a 4.6 KB block and a 2 KB spine each)" % (blocks, classes))

chunks = []
c = int(ev("'runtime.persistentChunks'"))
while c:
    chunks.append(c)
    c = struct.unpack("<Q", gdb.selected_inferior().read_memory(c, 8).tobytes())[0]
pres = sum(len(pages(c, c + (256 << 10))) for c in chunks)
print("persistentalloc chunks: %d, %s resident" % (len(chunks), kb(pres)))
t = ev("'runtime.itabTable'").dereference()
print("itab table: %d entries for %d itabs" % (int(t["size"]), int(t["count"])))
print("other anonymous mappings (bss, runtime metadata, chunks above):")
for n, lo, hi in sorted(other, reverse=True):
    print("  %s %x-%x (%d KB)" % (kb(n), lo, hi, (hi - lo) >> 10))
