"""Model backends: interface (`base`), registry (`registry`), implementations, record/replay."""
