"""What tool authors import: file ops, paths, globs, ripgrep, truncation, images, processes and shells."""
