"""Window search tab: Agentic Window Search (CoM2-Bench) over full movies."""
