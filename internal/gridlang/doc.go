// Package gridlang expands the grid language of sgplab's config files into
// plain grids: templates a grid extends ([template.NAME], extends = "NAME"
// or a list, merged in order, tables key by key), a matrix of variables
// whose combinations make grids named from their variants
// (name = "uci-{data}-{kernel}") or, for variables the name does not use,
// include rows of one grid, [[grid.when]] rules that set keys in matching
// combinations or skip them, derived values ({expressions} over the matrix
// variables and the grid's let table), and profile entries that name grids
// by glob pattern. Report sections ([[claim]], [[figure]], [[table]],
// [[report.derive]]) extend the same templates and may have a matrix, when
// rules and let values (one section per combination); their expressions
// are evaluated only where they have a matrix or a let table, and {{ }}
// write braces. The runner and the report parse the expanded file as if
// written out, so run ids and report sections cannot depend on how they
// were written; Result.Origin maps every expanded key back to the source
// key that defined it, and Result.Lines indexes the expanded keys at
// their sources' lines, for errors at file:line. docs/grids.md describes
// the language for users.
package gridlang
