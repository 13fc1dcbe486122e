"""Internal helpers of xtile; nothing here is public."""
