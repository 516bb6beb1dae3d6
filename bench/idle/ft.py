# ft.py FAULTS LO HI: the faults whose address is in [LO,HI) (hex), sorted, with their first frames.
# Each fault in a file mapping maps a 64 KB window (fault-around), so each line is ~16 resident pages.
import sys, re
recs = open(sys.argv[1]).read().split("\n\n")
lo, hi = int(sys.argv[2],16), int(sys.argv[3],16)
out=[]
for r in recs:
    ls = [l.strip() for l in r.strip().split("\n") if l.strip()]
    if not ls: continue
    try: addr = int(ls[0].split()[0],16)
    except ValueError: continue
    if not (lo <= addr < hi): continue
    frames = [l.split(None,1)[1] for l in ls[1:] if len(l.split(None,1))>1 and not l.startswith("ffffffff")]
    out.append((addr, frames))
for addr, fr in sorted(out):
    print("%x %s" % (addr, " <- ".join(fr[:7])[:300]))
