// Package netcdf reads the classic netCDF formats (CDF-1 and the 64-bit
// offset CDF-2). It reads the header and the non-record variables, which is
// all the gridded data files used by the harness need; it does not read
// netCDF-4/HDF5 files. ReadMasked applies the CF missing-value and packing
// conventions, and Encode writes small classic files (for test fixtures).
package netcdf
