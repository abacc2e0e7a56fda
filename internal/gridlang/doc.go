// Package gridlang expands the grid language of sgplab's config files into
// plain grids: templates a grid extends ([template.NAME], extends = "NAME"
// or a list, merged in order, tables key by key), a matrix of variables
// whose combinations make grids named from their variants
// (name = "uci-{data}-{kernel}") or, for variables the name does not use,
// include rows of one grid, [[grid.when]] rules that set keys in matching
// combinations or skip them, derived values ({expressions} over the matrix
// variables and the grid's let table), and profile entries that name grids
// by glob pattern. The runner parses the expanded file as if written out,
// so run ids cannot depend on how a grid was written; Result.Origin maps
// every expanded key back to the source key that defined it, for errors
// at file:line. docs/grids.md describes the language for users.
package gridlang
