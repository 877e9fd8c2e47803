"""aitrail.analyzer.outputs."""
