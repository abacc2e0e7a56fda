// Package suggest finds the valid name a mistyped one most likely meant,
// for "did you mean" hints in error messages.
package suggest

import "strings"

// Closest returns the element of valid nearest to s in edit distance
// (case-insensitive), or "" when none is near enough to be a likely typo:
// at most a third of the longer name's length, and at least one edit
// fewer than rewriting it whole.
func Closest(s string, valid []string) string {
	best, bestD := "", -1
	ls := strings.ToLower(s)
	for _, v := range valid {
		d := distance(ls, strings.ToLower(v))
		if bestD < 0 || d < bestD {
			best, bestD = v, d
		}
	}
	if bestD < 0 {
		return ""
	}
	n := max(len([]rune(s)), len([]rune(best)))
	if bestD == 0 || bestD > max(1, n/3) || bestD >= n {
		if bestD == 0 && s != best {
			return best // differs only in case
		}
		return ""
	}
	return best
}

// Hint is "; did you mean X?" for the closest valid name, or "".
func Hint(s string, valid []string) string {
	if c := Closest(s, valid); c != "" {
		return "; did you mean " + quote(c) + "?"
	}
	return ""
}

func quote(s string) string { return "\"" + s + "\"" }

// distance is the Levenshtein distance between a and b (in runes), with
// a transposition of neighbours counted as one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
