"""aitrail.analyzer.engine."""
