"""Writing and reading the bundle: layout, tar headers, the zstd writer, the index reader, signatures."""
