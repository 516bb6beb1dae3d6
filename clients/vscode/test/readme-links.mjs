// Checks the README inside a packaged .vsix: every link and image is either absolute and, when it
// points into this repository on GitHub, names a file that exists in this checkout; or relative
// and names a file inside the package. The Marketplace and VS Code's extension page show this
// README away from the repository, so a relative link that vsce did not rewrite is broken there.
// Usage: node test/readme-links.mjs agentd.vsix   Prints "readme-links: ok (N links)" or the broken ones.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const vsix = process.argv[2];
const here = path.dirname(new URL(import.meta.url).pathname);
const repo = path.resolve(here, '../../..');
const REPO_URL = /^https:\/\/(?:github\.com\/agentd-dev\/agentd\/(?:blob|raw|tree)\/[^/]+|raw\.githubusercontent\.com\/agentd-dev\/agentd\/[^/]+)\/(.*)$/;

const list = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter(Boolean);
// vsce stores the README as extension/readme.md.
const name = list.find((f) => f.toLowerCase() === 'extension/readme.md');
if (!name) { console.log('readme-links: the package has no README'); process.exit(1); }
const readme = execFileSync('unzip', ['-p', vsix, name], { encoding: 'utf8' });
const links = [...readme.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
const broken = [];
for (const l of links) {
  if (l.startsWith('#') || l.startsWith('mailto:')) continue;
  const m = REPO_URL.exec(l);
  if (m) {
    // new URL() folds "clients/vscode/../../README.md" as a browser would.
    const p = decodeURIComponent(new URL(`https://x/${m[1]}`).pathname.slice(1)).split('#')[0];
    if (!fs.existsSync(path.join(repo, p))) broken.push(`${l} (no ${p} in the repository)`);
  } else if (/^https?:\/\//.test(l)) {
    continue;
  } else if (!list.includes(`extension/${l.split('#')[0]}`)) {
    broken.push(`${l} (relative, and not in the package)`);
  }
}
if (broken.length) {
  console.log(`readme-links: ${broken.length} broken link(s) in the packaged README:\n  ${broken.join('\n  ')}`);
  process.exit(1);
}
console.log(`readme-links: ok (${links.length} links)`);
