//go:build race

package acceptance_test

// raceBuild: under go test -race the daemon is built with -race too, so a data race in agentd
// during the suite fails the test that provoked it.
const raceBuild = true
