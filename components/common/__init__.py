"""What every tab shares: errors, file I/O, intervals, validation, paths, limits, batch runs."""
