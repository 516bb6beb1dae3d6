// The part of the extension that activation does not need, bundled on its own
// (dist/languageClient.js) and required by the daemon only once activate() has returned:
// vscode-languageclient, which is most of the extension's code, the handlers of agentd's
// reverse requests, which run only once agentd is up, and what only a command needs. Loading it cost the extension host's
// start-up 60-odd ms when it was part of the activation bundle (docs/benchmarks.md).
// Import nothing stateful from the activation bundle here: a module both bundles include exists
// twice at run time.
export {
  CloseAction, ErrorAction, LanguageClient, ResponseError, State, TransportKind,
} from 'vscode-languageclient/node';
export * as editor from './editorState';
export { configureProvider } from './provider';
