// Finding the agentd binary: the `agentd.path` setting, else a binary shipped inside the
// extension for this platform, else `agentd` on PATH. Pure: the file system is passed in.
import * as l10n from '@vscode/l10n';
import * as path from 'path';

export interface BinaryLookup {
  /** The `agentd.path` setting, possibly empty or with a leading `~`. */
  configuredPath: string;
  /** The extension's install folder (context.extensionPath). */
  extensionPath: string;
  platform: string; // process.platform
  arch: string; // process.arch
  /** The PATH environment variable. */
  pathEnv: string;
  homeDir: string;
  /** True when the file exists and is executable. */
  isExecutable: (p: string) => boolean;
}

export type BinaryResult =
  | { ok: true; path: string; source: 'setting' | 'bundled' | 'path' }
  | { ok: false; message: string };

export function exeName(platform: string): string {
  return platform === 'win32' ? 'agentd.exe' : 'agentd';
}

/** Where the extension ships a binary for a platform: bin/<platform>-<arch>/agentd. */
export function bundledPath(extensionPath: string, platform: string, arch: string): string {
  return path.join(extensionPath, 'bin', `${platform}-${arch}`, exeName(platform));
}

export function findAgentd(l: BinaryLookup): BinaryResult {
  const configured = l.configuredPath.trim();
  if (configured) {
    const p = configured.startsWith('~') ? path.join(l.homeDir, configured.slice(1)) : configured;
    if (l.isExecutable(p)) return { ok: true, path: p, source: 'setting' };
    return {
      ok: false,
      message: l10n.t('The agentd binary set in "agentd.path" ({0}) does not exist or is not executable. Fix the path in Settings, or clear it to use the bundled binary or agentd on PATH.', p),
    };
  }
  const bundled = bundledPath(l.extensionPath, l.platform, l.arch);
  if (l.isExecutable(bundled)) return { ok: true, path: bundled, source: 'bundled' };
  const sep = l.platform === 'win32' ? ';' : ':';
  for (const dir of l.pathEnv.split(sep)) {
    if (!dir) continue;
    const p = path.join(dir, exeName(l.platform));
    if (l.isExecutable(p)) return { ok: true, path: p, source: 'path' };
  }
  return {
    ok: false,
    message: l10n.t('agentd was not found: this extension has no bundled binary for {0} and there is no "agentd" on PATH. Install it from a checkout of agentd (CGO_ENABLED=0 go install ./cmd/agentd) or set "agentd.path" to the binary.', `${l.platform}-${l.arch}`),
  };
}
