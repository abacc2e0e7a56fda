package datasets

import (
	"fmt"

	"sgplab/internal/suggest"
)

// didYouMean returns ` (did you mean "c"?)` for the candidate c closest to
// name, or "" when none is close: a misspelt column name is usually one
// edit (a wrong case, a dropped, doubled or swapped letter) from the right one.
func didYouMean(name string, candidates []string) string {
	if c := suggest.Closest(name, candidates); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}
