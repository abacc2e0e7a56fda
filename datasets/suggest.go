package datasets

import (
	"fmt"
	"strings"
)

// didYouMean returns ` (did you mean "c"?)` for the candidate c closest to
// name, or "" when none is close: a misspelt column name is usually one
// edit (a wrong case, a dropped, doubled or swapped letter) from the right one.
func didYouMean(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if d < len([]rune(name)) && d <= max(1, len([]rune(c))/3) && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the optimal-string-alignment distance between a and b:
// the fewest insertions, deletions, substitutions and swaps of adjacent
// runes that turn one into the other.
func editDistance(a, b string) int {
	r, s := []rune(a), []rune(b)
	// d[i][j] is the distance between r[:i] and s[:j]; three rows suffice.
	prev2 := make([]int, len(s)+1)
	prev := make([]int, len(s)+1)
	cur := make([]int, len(s)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(r); i++ {
		cur[0] = i
		for j := 1; j <= len(s); j++ {
			cost := 1
			if r[i-1] == s[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && r[i-1] == s[j-2] && r[i-2] == s[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(s)]
}
