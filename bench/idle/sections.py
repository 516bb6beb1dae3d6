# sections.py BIN RESIDENT_LIST: resident pages of BIN per ELF section group
import sys, subprocess, collections
out = subprocess.run(["readelf","-SW",sys.argv[1]],capture_output=True,text=True).stdout
secs=[]
for l in out.splitlines():
    if "]" not in l: continue
    f=l.split("]",1)[1].split()
    if len(f)>=5 and f[0].startswith(".") and int(f[2],16)>0: secs.append((f[0],int(f[2],16),int(f[4],16)))
res=[int(l,16) for l in open(sys.argv[2]) if l.startswith("0x")]
c=collections.Counter()
for v in res:
    best=None
    for n,a,s in secs:
        if a//4096*4096 <= v < a+s: best=n
    c[best or "?"]+=1
print("  ".join("%s %d/%d" % (n, c[n], (s+4095)//4096) for n,a,s in secs if c[n]) + "  (pages)")
