"""Storage layer: the notes folder, the history folder, the SQLite index and keeping them in step."""
