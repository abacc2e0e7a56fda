package results

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// A read-only Store runs hand-written SQL (`sgplab query`), so "read-only"
// must hold against any statement, not only against the ones this package
// writes. mode=ro and PRAGMA query_only cover the main database, but an
// ATTACHed file is opened read-write, VACUUM INTO writes a new file
// anywhere, and PRAGMAs change the connection. So every connection of a
// read-only store also gets
//
//   - an authorizer (readGuard) that SQLite consults while it compiles each
//     statement, allowing only reads: SELECT, column reads, functions other
//     than load_extension, recursive CTEs and the PRAGMAs in readPragmas
//     without a value to set; every write, schema change, transaction,
//     ATTACH and DETACH is refused before it runs (VACUUM compiles no
//     authorizer action, but runs an internal ATTACH that is refused);
//   - a limit of zero attached databases, so ATTACH (and VACUUM, which
//     attaches its target) fails in SQLite even if the authorizer allowed it.
//
// go-sqlite3 does not expose sqlite3_db_config, so SQLITE_DBCONFIG_DEFENSIVE
// cannot be set; what it guards against (writable_schema, writes to shadow
// tables) is a PRAGMA write and a table write, both refused above.

// readPragmas are the PRAGMAs a read-only store runs: informational ones,
// mapped to whether they take an argument that names an object or a count
// (table_info(runs), quick_check(20)) rather than a value to set.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_list": true, "index_info": true, "index_xinfo": true,
	"foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
	"user_version": false, "schema_version": false, "application_id": false, "data_version": false,
	"page_size": false, "page_count": false, "freelist_count": false, "encoding": false,
	"database_list": false, "collation_list": false, "function_list": false,
	"module_list": false, "pragma_list": false, "compile_options": false,
	"journal_mode": false, "foreign_keys": false, "query_only": false,
}

// refusedFunctions are SQL functions that reach outside the database.
var refusedFunctions = map[string]bool{"load_extension": true, "fts3_tokenizer": true}

// schemaTables are the names of SQLite's schema table.
var schemaTables = map[string]bool{"sqlite_master": true, "sqlite_schema": true, "sqlite_temp_master": true, "sqlite_temp_schema": true}

// sqliteRecursive is SQLITE_RECURSIVE (a WITH RECURSIVE reference), which
// go-sqlite3 does not export.
const sqliteRecursive = 33

// actionNames name the authorizer actions a read-only store refuses.
var actionNames = map[int]string{
	sqlite3.SQLITE_INSERT: "INSERT into", sqlite3.SQLITE_UPDATE: "UPDATE of", sqlite3.SQLITE_DELETE: "DELETE from",
	sqlite3.SQLITE_CREATE_INDEX: "CREATE INDEX", sqlite3.SQLITE_CREATE_TABLE: "CREATE TABLE",
	sqlite3.SQLITE_CREATE_TEMP_INDEX: "CREATE TEMP INDEX", sqlite3.SQLITE_CREATE_TEMP_TABLE: "CREATE TEMP TABLE",
	sqlite3.SQLITE_CREATE_TEMP_TRIGGER: "CREATE TEMP TRIGGER", sqlite3.SQLITE_CREATE_TEMP_VIEW: "CREATE TEMP VIEW",
	sqlite3.SQLITE_CREATE_TRIGGER: "CREATE TRIGGER", sqlite3.SQLITE_CREATE_VIEW: "CREATE VIEW",
	sqlite3.SQLITE_CREATE_VTABLE: "CREATE VIRTUAL TABLE", sqlite3.SQLITE_DROP_INDEX: "DROP INDEX",
	sqlite3.SQLITE_DROP_TABLE: "DROP TABLE", sqlite3.SQLITE_DROP_TEMP_INDEX: "DROP INDEX",
	sqlite3.SQLITE_DROP_TEMP_TABLE: "DROP TABLE", sqlite3.SQLITE_DROP_TEMP_TRIGGER: "DROP TRIGGER",
	sqlite3.SQLITE_DROP_TEMP_VIEW: "DROP VIEW", sqlite3.SQLITE_DROP_TRIGGER: "DROP TRIGGER",
	sqlite3.SQLITE_DROP_VIEW: "DROP VIEW", sqlite3.SQLITE_DROP_VTABLE: "DROP VIRTUAL TABLE",
	sqlite3.SQLITE_TRANSACTION: "transaction", sqlite3.SQLITE_SAVEPOINT: "SAVEPOINT",
	sqlite3.SQLITE_ATTACH: "ATTACH", sqlite3.SQLITE_DETACH: "DETACH",
	sqlite3.SQLITE_ALTER_TABLE: "ALTER TABLE", sqlite3.SQLITE_REINDEX: "REINDEX",
	sqlite3.SQLITE_ANALYZE: "ANALYZE", sqlite3.SQLITE_COPY: "COPY",
}

// readGuard is the authorizer of a read-only store's connections. It
// remembers what it refused last, so that SQLite's bare "not authorized"
// can name the statement's fault.
type readGuard struct {
	mu      sync.Mutex
	refused string
}

func (g *readGuard) authorize(op int, arg1, arg2, _ string) int {
	switch op {
	case sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqliteRecursive:
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_FUNCTION:
		if !refusedFunctions[strings.ToLower(arg2)] {
			return sqlite3.SQLITE_OK
		}
		return g.refuse("the function " + arg2)
	case sqlite3.SQLITE_PRAGMA:
		name := strings.ToLower(arg1)
		takesArg, ok := readPragmas[name]
		switch {
		case ok && (arg2 == "" || takesArg):
			return sqlite3.SQLITE_OK
		case ok:
			return g.refuse(fmt.Sprintf("PRAGMA %s = %s (only reading it)", name, arg2))
		}
		return g.refuse("PRAGMA " + name + " (not an informational pragma)")
	case sqlite3.SQLITE_ATTACH:
		return g.refuse(fmt.Sprintf("attaching %q (ATTACH, or VACUUM, which attaches its target)", arg1))
	}
	if schemaTables[strings.ToLower(arg1)] && (op == sqlite3.SQLITE_INSERT || op == sqlite3.SQLITE_UPDATE || op == sqlite3.SQLITE_DELETE) {
		return g.refuse("changing the schema") // how DROP and CREATE begin
	}
	what, ok := actionNames[op]
	if !ok {
		what = fmt.Sprintf("authorizer action %d", op)
	}
	if arg1 != "" && op != sqlite3.SQLITE_TRANSACTION {
		what += " " + arg1
	}
	return g.refuse(what)
}

// refuse records the first refusal since reset and denies the action.
func (g *readGuard) refuse(what string) int {
	g.mu.Lock()
	if g.refused == "" {
		g.refused = what
	}
	g.mu.Unlock()
	return sqlite3.SQLITE_DENY
}

// reset forgets the last refusal; Query calls it before each statement.
func (g *readGuard) reset() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.refused = ""
	g.mu.Unlock()
}

// explain turns SQLite's "not authorized" (SQLITE_AUTH, or SQLITE_ERROR for
// a refused function) after a refusal into an error naming what was
// refused; other errors pass through.
func (g *readGuard) explain(err error) error {
	var se sqlite3.Error
	if g == nil || !errors.As(err, &se) || se.Code != sqlite3.ErrAuth && se.Code != sqlite3.ErrError {
		return err
	}
	g.mu.Lock()
	what := g.refused
	g.mu.Unlock()
	if what == "" {
		return err
	}
	return fmt.Errorf("%w: the database is opened read-only and refuses %s; only SELECT, WITH and informational PRAGMAs run", errReadOnlyQuery, what)
}

// errReadOnlyQuery wraps the errors of statements a read-only store refused.
var errReadOnlyQuery = errors.New("statement refused")

// hook installs the guard on a new connection, with the math functions every
// store has.
func (g *readGuard) hook(c *sqlite3.SQLiteConn) error {
	if err := registerMath(c); err != nil {
		return err
	}
	c.SetLimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
	c.RegisterAuthorizer(g.authorize)
	return nil
}

// guardedConnector opens the connections of a read-only store, each with
// the guard installed before any statement of the caller runs.
type guardedConnector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

func newGuardedConnector(dsn string, g *readGuard) *guardedConnector {
	return &guardedConnector{dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: g.hook}}
}

func (c *guardedConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }

func (c *guardedConnector) Driver() driver.Driver { return c.drv }
