// The MCP sign-in end to end (docs/protocol.md "MCP sign-in"): a fake OAuth authorization
// server and the MCP server it protects (mcp/mcpauth/oauthtest/fakeoauth, built by ../e2e.sh)
// on 127.0.0.1; the user settings name the server; a new chat's session finds no token and the
// extension offers "Sign in"; agentd's window/showDocument makes VS Code open the authorization
// page in a browser tab, which follows the redirect to agentd's loopback listener; the next
// turn's call reaches the server with the token. Called by run-e2e.mjs with its helpers (the
// user settings are typed in the settings editor: code-server does not notice a write behind its back).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

export async function mcpSignInTest(h) {
  // Not yet passing (issue 29): the toast, "Sign in" and window/showDocument work, but
  // code-server's openExternal turns the loopback authorization URL into its port proxy and
  // drops the path and query (http://127.0.0.1:AS/authorize?… opens as
  // http://127.0.0.1:18080/proxy/AS/), so the browser never reaches the authorization page.
  // Run it with AGENTD_E2E_MCP_SIGNIN=1 once the client opens such a URL another way.
  if (!process.env.AGENTD_E2E_MCP_SIGNIN) { h.log('MCP sign-in e2e skipped (AGENTD_E2E_MCP_SIGNIN=1 runs it; it does not pass yet)'); return; }
  const { test, log, waitFor, startFake, newChat, sendInChat, chatSays, chat, fakeRequests, track, stopChild, userSettings } = h;
  // run-e2e.mjs's setUserSettings, with the patience a loaded machine needs: the JSON typed
  // here is long, and saving it may take longer than the 10 s that helper waits.
  const setUserSettings = async (st, done) => {
    const page = h.page();
    for (let attempt = 1; ; attempt++) {
      await h.runCommand('Preferences: Open User Settings (JSON)');
      await page.locator('.tab.active', { hasText: 'settings.json' }).waitFor({ timeout: 30000 });
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(JSON.stringify(st));
      await page.keyboard.press('Control+S');
      const newer = page.locator('.notifications-toasts .notification-toast', { hasText: 'The content of the file is newer' });
      try {
        await waitFor('settings.json on disk is the JSON typed', async () => {
          if (await newer.count()) await newer.first().locator('a.monaco-button, .monaco-button', { hasText: 'Overwrite' }).first().click();
          try { return done(JSON.parse(fs.readFileSync(h.settingsPath, 'utf8'))); } catch { return false; }
        }, 40000);
        break;
      } catch (e) {
        if (attempt >= 2) throw e;
        log('settings.json did not reach the disk; typing it again');
      }
    }
    await page.locator('.tab', { hasText: 'settings.json' }).locator('.codicon-close').click({ force: true }).catch(() => {});
    const dontSave = page.locator('.monaco-dialog-box .monaco-button', { hasText: "Don't Save" });
    if (await dontSave.count()) await dontSave.click();
  };
  await test('an MCP server that needs sign-in offers Sign in, which signs in through the browser', async () => {
    const page = h.page(), ctx = h.ctx();
    const bin = process.env.FAKEOAUTH;
    if (!bin) throw new Error('FAKEOAUTH is not set (../e2e.sh builds it)');
    const child = track(spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] }));
    let changed = false;
    try {
      const { mcp } = await new Promise((resolve, reject) => {
        readline.createInterface({ input: child.stdout }).once('line', (l) => resolve(JSON.parse(l)));
        child.once('exit', (c) => reject(new Error(`fakeoauth exited ${c}`)));
        setTimeout(() => reject(new Error('fakeoauth printed nothing in 10 s')), 10000);
      });
      await startFake('mcp-signin', {
        routes: [{ match: 'You name coding conversations', turn: { text: 'Sign-in chat' } }],
        turns: [
          { text: 'Hello back.', chunkDelayMs: 5 },
          { toolCalls: [{ id: 'call_who', name: 'whoami', arguments: {} }], chunkDelayMs: 5 },
          { text: 'Signed in and called.', chunkDelayMs: 5 },
        ],
      });
      // A session takes its servers from the settings when it starts, and New Chat keeps a blank
      // chat (its session made before the change): the chat shown now gets a turn first, so the
      // New Chat after the change starts a session that has the docs server.
      await newChat();
      await sendInChat('Hello');
      await chatSays('Hello back.', 30000);
      await waitFor('turn ended', async () => (await chat().locator('body').getAttribute('data-running')) === 'false', 15000);
      const agentd = userSettings['agentd.settings'];
      const withDocs = { ...agentd, mcpServers: [...agentd.mcpServers, { type: 'http', name: 'docs', url: mcp, headers: [] }] };
      changed = true;
      await setUserSettings({ ...userSettings, 'agentd.settings': withDocs }, (st) => JSON.stringify(st['agentd.settings']?.mcpServers ?? []).includes(mcp));
      // The new chat is not empty for long: the sign-in notice shows in it too.
      await h.runCommand('agentd: New Chat');
      await chat().locator('.notice', { hasText: 'docs needs you to sign in' }).first().waitFor({ timeout: 30000 })
        .catch(() => log('no sign-in notice in the chat'));
      // The toast hides after some seconds (a warning with an action is not sticky): it is
      // clicked as soon as it shows.
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'docs needs you to sign in' });
      await toast.waitFor({ timeout: 30000 });
      const popup = ctx.waitForEvent('page', { timeout: 60000 });
      await toast.locator('.monaco-button', { hasText: 'Sign in' }).click();
      // VS Code asks before it opens an external link.
      const open = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Open$/ });
      await open.waitFor({ timeout: 15000 }).then(() => open.click()).catch(() => log('no link-protection dialog'));
      const tab = await popup;
      log(`sign-in tab opened at ${tab.url().replace(/code_challenge=[^&]+/, 'code_challenge=…')}`);
      tab.on('framenavigated', (f) => { if (f === tab.mainFrame()) log(`sign-in tab at ${f.url().replace(/code=[^&]+/, 'code=…').slice(0, 200)}`); });
      await waitFor('the browser tab to land on agentd\'s callback', async () => /Signed in/.test(await tab.locator('body').innerText().catch(() => '')), 30000)
        .catch(async (e) => { log(`sign-in tab: ${tab.url().slice(0, 200)}: ${(await tab.locator('body').innerText().catch(() => '?')).slice(0, 300)}`); throw e; });
      log(`sign-in tab: ${tab.url().replace(/code=[^&]+/, 'code=…')}`);
      await tab.close();
      await page.locator('.notifications-toasts .notification-toast', { hasText: 'signed in to docs' }).waitFor({ timeout: 30000 });
      await sendInChat('Who am I?');
      const card = chat().locator('.permission:not(.done)');
      await card.locator('.perm-server', { hasText: 'docs' }).waitFor({ timeout: 60000 });
      await card.locator('button', { hasText: 'Allow once' }).click();
      await chatSays('Signed in and called.', 30000);
      const toolMsg = JSON.stringify(fakeRequests().flatMap((r) => (r.messages ?? []).filter((m) => m.role === 'tool')));
      if (!toolMsg.includes('token access-')) throw new Error(`the call did not reach the server with a token: ${toolMsg.slice(0, 300)}`);
    } finally {
      if (changed) await setUserSettings(userSettings, (st) => !JSON.stringify(st).includes('"docs"')).catch((e) => log(`settings not restored: ${e.message}`));
      await stopChild(child);
    }
  });
}
