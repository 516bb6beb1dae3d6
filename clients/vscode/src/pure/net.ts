// Which provider URLs need no API key: loopback and private-network servers (Ollama,
// LM Studio, llama-server on this machine or the LAN), as agentd itself decides: by the address
// and "localhost" (which agentd dials at the loopback address without looking it up), never by
// another name ("*.localhost", "*.internal"), which anyone's DNS may point anywhere.

function ipv4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((n) => n <= 255) ? parts : null;
}

/** True for localhost and the address literals 127/8, ::1, 10/8, 172.16/12, 192.168/16, 169.254/16, fc00::/7, fe80::/10. */
export function isLoopbackOrPrivateHost(hostname: string): boolean {
  let h = hostname.trim().toLowerCase();
  if (h === 'localhost' || h === 'localhost.') return true;
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  const v4 = ipv4(h);
  if (v4) {
    const [a, b] = v4;
    return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 169 && b === 254);
  }
  if (h.includes(':')) {
    if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    if (mapped) return isLoopbackOrPrivateHost(mapped[1]);
    const first = parseInt(h.split(':')[0] || '0', 16);
    if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
    if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link local
  }
  return false;
}

/** True when a provider at this base URL needs no key. Unparseable URLs need one. */
export function needsNoKey(baseUrl: string): boolean {
  try {
    return isLoopbackOrPrivateHost(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}
