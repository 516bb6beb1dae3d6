// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk 2.x, its stable ACP
// v1 entry point and the app API that replaced 1.x's ClientSideConnection), driving `agentd acp`
// through the scenario the Go test (acp_test.go) asserts on. Its schema validation turns any
// message of the wrong shape into a failure. It prints one JSON report on stdout.
//
// env: ACP_SDK (the SDK's dist/v1/stable/acp.js), AGENTD_BIN, ROOT (the workspace), and the XDG
// directories agentd uses.
import { spawn } from "node:child_process";
import { Writable } from "node:stream";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.ACP_SDK).href);
const root = process.env.ROOT;
const report = { processes: [] };

// startAgent spawns agentd acp and connects the SDK's client to it, keeping the raw stdout bytes.
function startAgent(log, env = process.env) {
  const child = spawn(process.env.AGENTD_BIN, ["acp"], { cwd: root, env, stdio: ["pipe", "pipe", "inherit"] });
  const raw = [];
  const input = new ReadableStream({
    start(ctrl) {
      child.stdout.on("data", (d) => { raw.push(Buffer.from(d)); ctrl.enqueue(new Uint8Array(d)); });
      child.stdout.on("end", () => ctrl.close());
    },
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), input);
  const terminals = new Map();
  let nextTerminal = 1;
  const m = acp.methods.client;
  const handlers = {
    async requestPermission(p) {
      log.permissions.push({ title: p.toolCall.title, kind: p.toolCall.kind, content: p.toolCall.content ?? [], options: p.options.map((o) => o.kind) });
      const allow = p.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    },
    async sessionUpdate(p) {
      log.updates.push(p.update);
      if (log.onUpdate) log.onUpdate(p.update);
    },
    async readTextFile(p) {
      log.reads.push(p.path);
      if (path.basename(p.path) === "notes.txt") return { content: "the text in the client's buffer\n" };
      return { content: fs.readFileSync(p.path, "utf8") };
    },
    async writeTextFile(p) {
      log.writes.push({ path: p.path, content: p.content });
      fs.writeFileSync(p.path, p.content);
      return {};
    },
    async createTerminal(p) {
      const id = "t" + nextTerminal++;
      const env = { ...process.env };
      for (const v of p.env ?? []) env[v.name] = v.value;
      const proc = spawn(p.command, p.args ?? [], { cwd: p.cwd ?? root, env });
      const t = { output: "", exit: null };
      proc.stdout.on("data", (d) => (t.output += d));
      proc.stderr.on("data", (d) => (t.output += d));
      t.done = new Promise((resolve) => proc.on("close", (code, signal) => { t.exit = { exitCode: code, signal }; resolve(t.exit); }));
      t.proc = proc;
      terminals.set(id, t);
      log.terminals.push({ command: p.command, args: p.args, cwd: p.cwd, hidesKey: (p.env ?? []).some((v) => v.name === "OPENAI_API_KEY" && v.value === "") });
      return { terminalId: id };
    },
    async terminalOutput(p) {
      const t = terminals.get(p.terminalId);
      return { output: t.output, truncated: false, exitStatus: t.exit ?? undefined };
    },
    async waitForTerminalExit(p) {
      return await terminals.get(p.terminalId).done;
    },
    async killTerminal(p) {
      terminals.get(p.terminalId).proc.kill();
      return {};
    },
    async releaseTerminal(p) {
      log.released.push(p.terminalId);
      terminals.delete(p.terminalId);
      return {};
    },
  };
  // The app API hands each handler a context; the params are its .params.
  const on = (f) => ({ params }) => f(params);
  const app = acp.client({ name: "sdk-test" })
    .onRequest(m.session.requestPermission, on(handlers.requestPermission))
    .onNotification(m.session.update, on(handlers.sessionUpdate))
    .onRequest(m.fs.readTextFile, on(handlers.readTextFile))
    .onRequest(m.fs.writeTextFile, on(handlers.writeTextFile))
    .onRequest(m.terminal.create, on(handlers.createTerminal))
    .onRequest(m.terminal.output, on(handlers.terminalOutput))
    .onRequest(m.terminal.waitForExit, on(handlers.waitForTerminalExit))
    .onRequest(m.terminal.kill, on(handlers.killTerminal))
    .onRequest(m.terminal.release, on(handlers.releaseTerminal))
    .onNotification("*", ({ method, params }) => { log.extensions.push({ method, params }); });
  const a = app.connect(stream).agent;
  // The agent-side calls, by ACP method name.
  const am = acp.methods.agent;
  const conn = {
    initialize: (p) => a.request(am.initialize, p),
    authenticate: (p) => a.request(am.authenticate, p),
    newSession: (p) => a.request(am.session.new, p),
    prompt: (p) => a.request(am.session.prompt, p),
    cancel: (p) => a.notify(am.session.cancel, p),
    listSessions: (p) => a.request(am.session.list, p),
    loadSession: (p) => a.request(am.session.load, p),
    setMode: (p) => a.request(am.session.setMode, p),
    setConfigOption: (p) => a.request(am.session.setConfigOption, p),
    extMethod: (name, p) => a.request(name, p),
  };
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return { conn, child, raw, exited };
}

function newLog() {
  return { updates: [], permissions: [], reads: [], writes: [], terminals: [], released: [], extensions: [] };
}

async function finish(agent, log) {
  agent.child.stdin.end();
  log.exitCode = await agent.exited;
  log.stdout = Buffer.concat(agent.raw).toString("utf8");
  report.processes.push(log);
}

const caps = { fs: { readTextFile: true, writeTextFile: true }, terminal: true, auth: { terminal: true } };

// The first process: initialize, authenticate, a full turn, steering, a cancelled turn.
{
  const log = newLog();
  const agent = startAgent(log);
  const { conn } = agent;
  log.initialize = await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps, clientInfo: { name: "sdk-test", version: "1" } });
  log.authenticate = await conn.authenticate({ methodId: "agentd-key" }).then(() => "ok", (e) => "error: " + e.message);
  const s = await conn.newSession({ cwd: root, mcpServers: [] });
  report.sessionId = s.sessionId;
  log.newSession = s;
  log.turn = await conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "Make a.txt say two" }] });
  // A mode change reaches the client as current_mode_update, which the SDK validates.
  log.setMode = await conn.setMode({ sessionId: s.sessionId, modeId: "plan" }).then(() => "ok", (e) => "error: " + e.message);
  await conn.setMode({ sessionId: s.sessionId, modeId: "ask" });
  log.steerIdle = await conn.extMethod("_agentd/session/steer", { sessionId: s.sessionId, prompt: [{ type: "text", text: "nothing runs" }] });
  // A turn whose model streams slowly: cancelled at its first text.
  let cancelledAt = 0;
  const firstText = new Promise((resolve) => {
    log.onUpdate = (u) => { if (u.sessionUpdate === "agent_message_chunk") resolve(); };
  });
  const turn = conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "Talk slowly" }] });
  await firstText;
  log.onUpdate = null;
  log.steerBusy = await conn.extMethod("_agentd/session/steer", { sessionId: s.sessionId, prompt: [{ type: "text", text: "and be brief" }] });
  cancelledAt = performance.now();
  await conn.cancel({ sessionId: s.sessionId });
  log.cancelled = await turn;
  log.cancelMs = performance.now() - cancelledAt;
  await finish(agent, log);
}

// A second process on the same state directory: list and load (replay) the session.
{
  const log = newLog();
  const agent = startAgent(log);
  const { conn } = agent;
  log.initialize = await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps });
  log.list = await conn.listSessions({ cwd: root });
  log.load = await conn.loadSession({ sessionId: report.sessionId, cwd: root, mcpServers: [] });
  await finish(agent, log);
}

// A third process whose settings name a provider that refuses the key: the prompt must reject
// with the error the user reads.
{
  const log = newLog();
  const agent = startAgent(log, { ...process.env, XDG_CONFIG_HOME: process.env.FAIL_CONFIG_HOME });
  const { conn } = agent;
  log.initialize = await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: caps });
  const s = await conn.newSession({ cwd: root, mcpServers: [] });
  log.failed = await conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "hi" }] }).then(
    (r) => ({ code: 0, message: "answered " + JSON.stringify(r) }),
    (e) => ({ code: e.code, message: e.message }),
  );
  await finish(agent, log);
}

// A fourth process whose settings price the model: a turn in a session with a second root
// (EXTRA), a client that takes boolean config options setting answer_review, and time for the
// title's usage_update to arrive.
{
  const log = newLog();
  const agent = startAgent(log, { ...process.env, XDG_CONFIG_HOME: process.env.PRICED_CONFIG_HOME });
  const { conn } = agent;
  log.initialize = await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { ...caps, session: { configOptions: { boolean: {} } } } });
  const s = await conn.newSession({ cwd: root, additionalDirectories: [process.env.EXTRA], mcpServers: [] });
  log.newSession = s;
  log.turn = await conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "Read the second root." }] });
  log.setBoolean = await conn.setConfigOption({ sessionId: s.sessionId, configId: "answer_review", type: "boolean", value: true });
  const titled = () => log.updates.some((u) => u.sessionUpdate === "session_info_update");
  for (let i = 0; i < 250 && !titled(); i++) await new Promise((r) => setTimeout(r, 20));
  await finish(agent, log);
}

process.stdout.write(JSON.stringify(report));
