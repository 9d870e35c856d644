"""The embedded backend: a folder of notes with an SQLite index beside it."""
