# resident.py PID: the resident pages (/proc/PID/pagemap) of the process's executable's mappings,
# one address a line. Reading pagemap needs root on recent kernels.
import os, struct, sys

pid = int(sys.argv[1])
exe = os.readlink(f"/proc/{pid}/exe")
with open(f"/proc/{pid}/pagemap", "rb") as pm:
    for line in open(f"/proc/{pid}/maps"):
        m = line.split()
        if len(m) < 6 or m[5] != exe:
            continue
        a, b = (int(x, 16) for x in m[0].split("-"))
        pm.seek(a // 4096 * 8)
        data = pm.read((b - a) // 4096 * 8)
        for i in range((b - a) // 4096):
            if struct.unpack_from("<Q", data, i * 8)[0] >> 63:  # bit 63: present
                print(hex(a + i * 4096))
