package results

import (
	"database/sql"
	"math"

	"github.com/mattn/go-sqlite3"

	"sgplab/internal/anyconv"
)

// driverName is go-sqlite3 with the math functions SQLite leaves out unless
// built with SQLITE_ENABLE_MATH_FUNCTIONS: ln, exp, sqrt and power, so that
// claims and derived values can convert units (an NLPD on standardised
// targets is nlpd − ln(y scale)) without a build tag.
const driverName = "sqlite3_sgplab"

func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: registerMath})
}

// registerMath adds the math functions to a new connection.
func registerMath(c *sqlite3.SQLiteConn) error {
	unary := func(f func(float64) float64) func(any) (any, error) {
		return func(x any) (any, error) {
			v, ok := anyconv.Float(x)
			if !ok {
				return nil, nil // NULL for NULL or text, as SQLite's own functions
			}
			return f(v), nil
		}
	}
	for name, f := range map[string]any{
		"ln":   unary(math.Log),
		"exp":  unary(math.Exp),
		"sqrt": unary(math.Sqrt),
		"power": func(x, y any) (any, error) {
			a, ok1 := anyconv.Float(x)
			b, ok2 := anyconv.Float(y)
			if !ok1 || !ok2 {
				return nil, nil
			}
			return math.Pow(a, b), nil
		},
	} {
		if err := c.RegisterFunc(name, f, true); err != nil {
			return err
		}
	}
	return nil
}
