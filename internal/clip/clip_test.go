package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"abc", 3, "abc"},
		{"abc", 5, "abc"},
		{"abcd", 3, "abc…"},
		{"abc", 0, "…"},
		{"abc", -1, "…"},
		// é is two bytes, € three, 😀 four: a cut inside one backs up to its start.
		{"héllo", 2, "h…"},
		{"héllo", 3, "hé…"},
		{"a€b", 2, "a…"},
		{"a€b", 3, "a…"},
		{"a€b", 4, "a€…"},
		{"😀😀", 3, "…"},
		{"😀😀", 4, "😀…"},
		{"😀😀", 7, "😀…"},
		{"日本語のテキスト", 10, "日本語…"},
		// Invalid UTF-8 is cut where n says: nothing is backed over that is not a character.
		{"ab\x80\x80\x80\x80\x80", 4, "ab\x80\x80…"},
		{"a\xe2\x82", 2, "a\xe2…"}, // a truncated character: its bytes stand alone
		{"\xff\x80\x80\x80", 2, "\xff\x80…"},
	} {
		if got := String(tc.s, tc.n, "…"); got != tc.want {
			t.Errorf("String(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	if got := String("abcdef", 2, ""); got != "ab" {
		t.Errorf("no mark: %q", got)
	}
}

// TestStringNeverSplitsACharacter cuts valid multi-byte text at every length: the result stays
// valid UTF-8, within the limit, and a prefix of the input.
func TestStringNeverSplitsACharacter(t *testing.T) {
	s := strings.Repeat("aé€😀", 8) + "ñandú 🇫🇷 résumé"
	for n := 0; n <= len(s)+1; n++ {
		got := String(s, n, "")
		if !utf8.ValidString(got) || len(got) > n || !strings.HasPrefix(s, got) {
			t.Fatalf("String(s, %d) = %q", n, got)
		}
		if len(s) > n && n-len(got) >= utf8.UTFMax {
			t.Fatalf("String(s, %d) cut %d bytes short", n, n-len(got))
		}
	}
}
