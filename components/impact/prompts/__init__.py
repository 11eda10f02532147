"""HAPACT's prompts and how their replies are read: temporal (Table 7) and region selection (A.6.3)."""
