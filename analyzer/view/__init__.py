"""aitrail.analyzer.view."""
