"""The floor every package stands on: errors, file writes, caches, the admin switch. Imports nothing of the project."""
