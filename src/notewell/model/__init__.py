"""Model layer: the note, its lenient header, ids, slugs. Imports nothing else of notewell but errors."""
