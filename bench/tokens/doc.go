// Package tokens measures agentd's token economy (issue 34 item 5): one fixed, scripted 24-step
// coding task (reads, searches, edits, a program run, across two prompts) runs through the real
// session engine, its real tools on a real project directory, and each dialect's real encoder
// (Anthropic, OpenAI, Gemini) against a local server that records every request body. From the
// recorded bodies it computes, per step, the bytes sent, the input tokens (bytes / 4) and the
// share of them a provider's prompt cache can serve: what the previous request left cached.
// The package is its tests; docs/benchmarks.md records the figures and the command.
package tokens
