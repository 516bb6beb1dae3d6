package early

import (
	"os"
	"testing"
)

func TestTestBinariesKeepTheRuntimeSetting(t *testing.T) {
	for arg0, want := range map[string]bool{
		os.Args[0]: true, "/tmp/go-build1/b001/early.test": true, `C:\b\agentd.test.exe`: true,
		"agentd": false, "/usr/local/bin/agentd": false, "/opt/latest/agentd": false,
	} {
		if got := testBinary(arg0); got != want {
			t.Errorf("testBinary(%q) = %v, want %v", arg0, got, want)
		}
	}
}
