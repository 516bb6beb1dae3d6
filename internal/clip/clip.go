// Package clip shortens text for display and logs without cutting a UTF-8 character in two. It
// is a leaf (standard library only) so that every package of the module may import it: one rule
// for where a cut may fall, instead of a copy per package that each got it right or wrong.
package clip

import "unicode/utf8"

// String returns s when it is at most n bytes long; otherwise the longest prefix of s of at most
// n bytes that does not end inside a character, followed by mark (which n does not count). Bytes
// that are not valid UTF-8 are characters of their own, so invalid text is cut at n exactly
// rather than backed up over. n < 0 counts as 0.
func String(s string, n int, mark string) string {
	n = max(n, 0)
	if len(s) <= n {
		return s
	}
	cut := n
	if !utf8.RuneStart(s[n]) {
		// s[n] continues a character only if a valid one starts at most three bytes before it.
		for i := n - 1; i >= 0 && i >= n-(utf8.UTFMax-1); i-- {
			if utf8.RuneStart(s[i]) {
				if r, size := utf8.DecodeRuneInString(s[i:]); (r != utf8.RuneError || size > 1) && i+size > n {
					cut = i
				}
				break
			}
		}
	}
	return s[:cut] + mark
}
