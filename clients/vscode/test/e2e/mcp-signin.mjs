// The MCP sign-in end to end (docs/protocol.md "MCP sign-in", "Signing in from a remote
// editor"): a fake OAuth authorization server and the MCP server it protects
// (mcp/mcpauth/oauthtest/fakeoauth, built by ../e2e.sh) on 127.0.0.1; the user settings name the
// server; a new chat's session finds no token and the extension offers "Sign in"; agentd's
// window/showDocument makes VS Code open the authorization page in a browser tab (through
// code-server's port proxy, its path and query kept), which follows the redirect to agentd's
// loopback listener; the next turn's call reaches the server with the token. Then the MCP view
// signs out and in again with a browser that cannot reach agentd's machine: its redirect is
// refused, and the address it ended on, pasted, finishes the sign-in. Called by run-e2e.mjs with
// its helpers (the user settings are typed in the settings editor: code-server does not notice
// a write behind its back).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

export async function mcpSignInTest(h) {
  const { test, log, waitFor, startFake, newChat, sendInChat, chatSays, chat, fakeRequests, track, stopChild, userSettings } = h;
  // Shared by the two tests: the fake's child and whether the settings were changed, undone
  // after the second.
  const st = { child: undefined, changed: false };
  // A notification the extension shows: its toast is watched for from before what shows it (a
  // toast is purged some seconds after it shows, and at times never shows while a popup had the
  // focus); without one within 15 s of the await, the notification center is looked in.
  const notification = (hasText) => {
    const page = h.page();
    let seen = false;
    const early = page.locator('.notifications-toasts .notification-toast', { hasText }).first().waitFor({ timeout: 90000 }).then(() => { seen = true; }, () => {});
    return async () => {
      await Promise.race([early, new Promise((r) => setTimeout(r, 15000))]);
      if (seen) return;
      log(`no toast "${hasText}": looking in the notification center`);
      await h.runCommand('Notifications: Show Notifications');
      try {
        await page.locator('.notifications-center .notification-list-item', { hasText }).first().waitFor({ timeout: 30000 });
      } finally {
        await h.runCommand('Notifications: Hide Notifications').catch(() => {});
      }
    };
  };
  // VS Code asks before it opens an external link, or does not (a link to its own origin): the
  // popup or the dialog, whichever comes first.
  const openedTab = async (popup) => {
    const open = h.page().locator('.monaco-dialog-box .monaco-button', { hasText: /^Open$/ });
    const tab = await Promise.race([popup, open.waitFor({ timeout: 60000 }).then(() => undefined)]);
    if (tab) return tab;
    await open.click();
    return popup;
  };
  // A button of a notification, from its toast or, once that was purged, the notification center.
  const notificationButton = async (hasText, button) => {
    const page = h.page();
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText }).last();
    try {
      await toast.waitFor({ timeout: 10000 });
      await toast.locator('.monaco-button', { hasText: button }).click({ timeout: 5000 });
    } catch {
      log(`no toast "${hasText}": from the notification center`);
      await h.runCommand('Notifications: Show Notifications');
      await page.locator('.notifications-center .notification-list-item', { hasText }).last().locator('.monaco-button', { hasText: button }).click({ timeout: 15000 });
    }
  };
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
    const child = st.child = track(spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] }));
    {
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
      // Configure Provider, run just before, saved another provider in the user settings: the
      // chat goes back to the fake model first.
      const onDisk = (() => { try { return JSON.parse(fs.readFileSync(h.settingsPath, 'utf8')); } catch { return {}; } })();
      if (onDisk['agentd.settings']?.provider !== userSettings['agentd.settings'].provider) {
        log('the user settings name another provider: back to the fake model');
        await setUserSettings(userSettings, (s) => s['agentd.settings']?.provider === userSettings['agentd.settings'].provider);
      }
      // A session takes its servers from the settings when it starts, and New Chat keeps a blank
      // chat (its session made before the change): the chat shown now gets a turn first, so the
      // New Chat after the change starts a session that has the docs server.
      await newChat();
      await sendInChat('Hello');
      await chatSays('Hello back.', 30000);
      await waitFor('turn ended', async () => (await chat().locator('body').getAttribute('data-running')) === 'false', 15000);
      const agentd = userSettings['agentd.settings'];
      const withDocs = { ...agentd, mcpServers: [...agentd.mcpServers, { type: 'http', name: 'docs', url: mcp, headers: [] }] };
      st.changed = true;
      await setUserSettings({ ...userSettings, 'agentd.settings': withDocs }, (st) => JSON.stringify(st['agentd.settings']?.mcpServers ?? []).includes(mcp));
      // The new chat is not empty for long: the sign-in notice shows in it too.
      await h.runCommand('agentd: New Chat');
      await chat().locator('.notice', { hasText: 'docs needs you to sign in' }).first().waitFor({ timeout: 30000 })
        .catch(() => log('no sign-in notice in the chat'));
      // The toast hides after some seconds (a warning with an action is not sticky): it is
      // clicked as soon as it shows.
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'docs needs you to sign in' });
      await toast.waitFor({ timeout: 30000 });
      // The authorization page is reached whole (code-server's port proxy turned a loopback
      // page into its root before, path and query dropped).
      const authorize = [];
      const seen = (r) => { if (/\/authorize\?/.test(r.url())) authorize.push(r.url()); };
      ctx.on('request', seen);
      const popup = ctx.waitForEvent('page', { timeout: 60000 });
      const signedIn = notification('signed in to docs');
      await toast.locator('.monaco-button', { hasText: 'Sign in' }).click();
      const tab = await openedTab(popup);
      log(`sign-in tab opened at ${tab.url().replace(/code_challenge=[^&]+/, 'code_challenge=…')}`);
      tab.on('framenavigated', (f) => { if (f === tab.mainFrame()) log(`sign-in tab at ${f.url().replace(/code=[^&]+/, 'code=…').slice(0, 200)}`); });
      await waitFor('the browser tab to land on agentd\'s callback', async () => /Signed in/.test(await tab.locator('body').innerText().catch(() => '')), 30000)
        .catch(async (e) => { log(`sign-in tab: ${tab.url().slice(0, 200)}: ${(await tab.locator('body').innerText().catch(() => '?')).slice(0, 300)}`); throw e; });
      log(`sign-in tab: ${tab.url().replace(/code=[^&]+/, 'code=…')}`);
      await tab.close();
      await signedIn();
      ctx.off('request', seen);
      log(`the browser asked ${authorize.map((u) => u.replace(/\?.*/, '?…')).join(', ')}`);
      if (!authorize.some((u) => u.includes('code_challenge_method=S256'))) throw new Error(`the authorization page was not asked with its query: ${authorize}`);
      await sendInChat('Who am I?');
      const card = chat().locator('.permission:not(.done)');
      await card.locator('.perm-server', { hasText: 'docs' }).waitFor({ timeout: 60000 });
      await card.locator('button', { hasText: 'Allow once' }).click();
      await chatSays('Signed in and called.', 30000);
      const toolMsg = JSON.stringify(fakeRequests().flatMap((r) => (r.messages ?? []).filter((m) => m.role === 'tool')));
      if (!toolMsg.includes('token access-')) throw new Error(`the call did not reach the server with a token: ${toolMsg.slice(0, 300)}`);
    }
  });

  await test('the MCP view signs out, and signs in again with the address a browser elsewhere ended on', async () => {
    const page = h.page(), ctx = h.ctx();
    if (!st.changed) throw new Error('the sign-in test before this one did not set the docs server up');
    // No toast of the first sign-in may answer for this one.
    await h.runCommand('Notifications: Clear All Notifications');
    await h.runCommand('agentd: Focus on MCP Servers View');
    const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'MCP Servers' }) });
    const row = pane.locator('.monaco-list-row', { hasText: 'docs' }).first();
    const rowSays = (what, re) => waitFor(what, async () => {
      await h.runCommand('agentd: Refresh MCP Servers');
      return re.test(await row.innerText({ timeout: 2000 }).catch(() => ''));
    }, 30000);
    await rowSays('the docs server listed as signed in', /signed in/);
    await row.click({ button: 'right' });
    const item = page.locator('.monaco-menu .action-label', { hasText: /^Sign out$/ });
    await item.waitFor({ timeout: 10000 });
    // The menu may take a click that came too soon after it opened for a slip: the keyboard then.
    await item.hover();
    await item.click();
    if (await item.isVisible().catch(() => false)) await page.keyboard.press('Enter');
    const signedOut = notification('signed out of docs');
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Sign out$/ }).click();
    await signedOut();
    await rowSays('the docs server listed as needing sign-in', /needs you to sign in/);

    // The browser is on another machine now: the authorization page's redirect to agentd's
    // loopback callback goes nowhere, as it would there; the address it was sent to is what the
    // user pastes. (Playwright routes only the first request of a redirect chain: the
    // authorization page is fetched here, and its redirect shown as a page that does not load.)
    let ended;
    const authorizePage = (u) => u.pathname.endsWith('/authorize');
    const refuse = async (route) => {
      const resp = await route.fetch({ maxRedirects: 0 });
      ended = resp.headers()['location'];
      return route.fulfill({ status: 502, contentType: 'text/plain', body: 'This site can\'t be reached' });
    };
    await ctx.route(authorizePage, refuse);
    try {
      const popup = ctx.waitForEvent('page', { timeout: 60000 });
      await row.hover();
      await row.locator('.action-label.codicon-sign-in').click();
      const tab = await openedTab(popup);
      await waitFor('the browser to be sent to agentd\'s callback', async () => !!ended, 30000);
      if (!/^http:\/\/127\.0\.0\.1:\d+\/oauth\/callback\?/.test(ended)) throw new Error(`the authorization page sent the browser to ${ended}`);
      log(`the browser ended on ${ended.replace(/code=[^&]+/, 'code=…').replace(/state=[^&]+/, 'state=…')}`);
      await tab.close();
      // A wrong address first: refused and said, and the sign-in still waits for the right one.
      const box = page.locator('.quick-input-widget input');
      await notificationButton('paste that page', 'Paste the address your browser ended on');
      await page.locator('.quick-input-widget', { hasText: 'finish signing in to docs' }).waitFor({ timeout: 10000 });
      await box.fill(ended.replace(/state=[^&]+/, 'state=forged'));
      const refused = notification('state agentd did not send');
      await page.keyboard.press('Enter');
      await refused();
      await notificationButton('paste that page', 'Paste the address your browser ended on');
      await page.locator('.quick-input-widget', { hasText: 'finish signing in to docs' }).waitFor({ timeout: 10000 });
      await box.fill(ended);
      const signedIn = notification('signed in to docs');
      await page.keyboard.press('Enter');
      await signedIn();
    } finally {
      await ctx.unroute(authorizePage, refuse);
    }
    await rowSays('the docs server listed as signed in again', /signed in/);
  });

  if (st.changed) await setUserSettings(userSettings, (s) => !JSON.stringify(s).includes('"docs"')).catch((e) => log(`settings not restored: ${e.message}`));
  if (st.child) await stopChild(st.child);
}
